// SPDX-License-Identifier: Apache-2.0
#include "sim/draft_pricer.hpp"

#include <algorithm>
#include <cmath>

#include "hardware/gpu_spec.hpp"
#include "models/layer_work.hpp"

namespace epsim::serving {

namespace {
// One GPU's share of a kernel split over `tp` tensor-parallel GPUs.
hardware::KernelWork shard(hardware::KernelWork w, double tp) {
  w.flops /= tp;
  w.bytes /= tp;
  w.gemm_n /= tp;
  return w;
}
}  // namespace

models::ModelSpec DraftPricer::draft_model_spec(const models::ModelSpec& target, const DraftModelSize& size) {
  models::ModelSpec d;
  d.name = "draft";
  d.hidden_size = size.hidden_size;
  d.num_layers = size.layers;
  d.first_dense_layers = size.layers;
  d.dense_intermediate_size = size.intermediate_size;
  d.attention = models::AttentionKind::gqa;
  d.num_heads = size.num_heads;
  d.num_kv_heads = size.num_kv_heads;
  d.head_dim = size.hidden_size / size.num_heads;
  d.vocab_size = size.vocab_size > 0 ? size.vocab_size : target.vocab_size;
  d.weight_format = target.weight_format;
  d.expert_format = target.weight_format;
  d.kv_cache_bytes = target.kv_cache_bytes;
  d.activation_bytes = target.activation_bytes;
  return d;
}

DraftPricer::DraftPricer(const models::ModelSpec& target, const SpeculativeConfig& spec, hardware::CostModel& cost,
                         int gpu_offset, int gpus, int attention_tp, hardware::CollectiveModel& collectives,
                         const hardware::EpCommConfig& comm)
    : target_(target),
      draft_(draft_model_spec(target, spec.draft)),
      method_(spec.method),
      k_(spec.draft_tokens),
      cost_(cost),
      collectives_(collectives),
      gpu_offset_(gpu_offset),
      gpus_(gpus),
      tp_(attention_tp),
      dispatch_bytes_(hardware::wire_bytes_per_token(comm.dispatch_dtype, target.hidden_size, comm.fp8_block)),
      combine_bytes_(hardware::wire_bytes_per_token(comm.combine_dtype, target.hidden_size, comm.fp8_block)) {
  for (Eigen::ArrayXd* a : {&rank_tokens_, &rank_pairs_, &rank_kv_}) {
    a->setZero(gpus_ / tp_);
  }
  for (Eigen::ArrayXd* a : {&local_ns_, &expert_ns_, &head_ns_, &busy_ns_, &share_, &pairs_}) {
    a->setZero(gpus_);
  }
}

double DraftPricer::kernel(int local_gpu, const hardware::KernelWork& w) {
  return w.tokens > 0.0 ? cost_.kernel_ns(gpu_offset_ + local_gpu, w) : 0.0;
}

void DraftPricer::gather(const Batch& batch, int pass) {
  rank_tokens_.setZero();
  rank_pairs_.setZero();
  rank_kv_.setZero();
  for (int rank = 0; rank < gpus_ / tp_; ++rank) {
    for (int i = batch.rank_begin[static_cast<std::size_t>(rank)];
         i < batch.rank_begin[static_cast<std::size_t>(rank) + 1]; ++i) {
      const BatchEntry& e = batch.entries[static_cast<std::size_t>(i)];
      if (e.prefill || e.tokens - 1 <= pass) {
        continue;
      }
      // Draft `pass` extends the verified token and the drafts before it: one query over that context.
      const auto context = static_cast<double>(e.context + 1 + pass);
      rank_tokens_(rank) += 1.0;
      rank_pairs_(rank) += models::causal_pairs(context, 1.0);
      rank_kv_(rank) += context;
    }
  }
}

double DraftPricer::mtp_pass(const Batch& batch, int pass) {
  gather(batch, pass);
  const double total = rank_tokens_.sum();
  if (total <= 0.0) {
    return 0.0;
  }
  const models::ModelSpec& m = target_;
  const double tp = static_cast<double>(tp_);
  for (int g = 0; g < gpus_; ++g) {
    const int rank = g / tp_;
    const double n = rank_tokens_(rank);
    const models::AttentionBatch ab{n / tp, rank_pairs_(rank) / tp, rank_kv_(rank)};
    hardware::KernelWork core = models::attention_core_work(m, ab, hardware::OpKind::attention_decode);
    core.tokens = n;
    local_ns_(g) = kernel(g, models::embedding_work(m, n / tp)) +
                   kernel(g, shard(models::mtp_projection_work(m, n), tp)) +
                   kernel(g, shard(models::attention_projection_work(m, n), tp)) + kernel(g, core) +
                   kernel(g, models::router_work(m, n / tp)) +
                   (m.shared_experts > 0
                        ? kernel(g, models::dense_ffn_work(
                                        m, n / tp, static_cast<double>(m.moe_intermediate_size * m.shared_experts)))
                        : 0.0);
    head_ns_(g) = kernel(g, shard(models::lm_head_work(m, n), tp));
    share_(g) = n / tp / total;
  }
  // The MTP layer's routed experts: top_k pairs per token, spread evenly over the group's GPUs.
  const double experts_per_gpu = static_cast<double>(m.routed_experts) / static_cast<double>(gpus_);
  const double pairs = total * static_cast<double>(m.top_k) / static_cast<double>(gpus_);
  const double activated =
      experts_per_gpu *
      (1.0 - std::pow(1.0 - static_cast<double>(m.top_k) / static_cast<double>(m.routed_experts), total));
  pairs_.setConstant(pairs);
  for (int g = 0; g < gpus_; ++g) {
    const auto slots = static_cast<std::int64_t>(std::ceil(experts_per_gpu));
    const std::int64_t tile = cost_.moe_tile(gpu_offset_ + g, static_cast<std::int64_t>(std::ceil(pairs)), slots);
    const double per_expert = activated > 0.0 ? pairs / activated : 0.0;
    const double padded =
        activated * static_cast<double>(hardware::pad_to_tile(static_cast<std::int64_t>(std::ceil(per_expert)), tile));
    expert_ns_(g) = kernel(g, models::expert_ffn_work(m, padded, pairs, activated));
  }
  const hardware::EpTraffic traffic{&share_, &pairs_, nullptr, nullptr, nullptr, false};
  const auto exchange = collectives_.ep_exchange_pair(traffic, dispatch_bytes_, combine_bytes_);
  busy_ns_ += local_ns_ + expert_ns_ + head_ns_;
  return local_ns_.maxCoeff() + exchange.dispatch.time_ns + expert_ns_.maxCoeff() + exchange.combine.time_ns +
         head_ns_.maxCoeff();
}

double DraftPricer::draft_model_pass(const Batch& batch, int pass) {
  gather(batch, pass);
  if (rank_tokens_.sum() <= 0.0) {
    return 0.0;
  }
  const models::ModelSpec& m = draft_;
  const double tp = static_cast<double>(tp_);
  const auto layers = static_cast<double>(m.num_layers);
  for (int g = 0; g < gpus_; ++g) {
    const int rank = g / tp_;
    const double n = rank_tokens_(rank);
    const models::AttentionBatch ab{n, rank_pairs_(rank), rank_kv_(rank)};
    const double layer =
        kernel(g, shard(models::attention_projection_work(m, n), tp)) +
        kernel(g, shard(models::attention_core_work(m, ab, hardware::OpKind::attention_decode), tp)) +
        kernel(g, shard(models::dense_ffn_work(m, n, static_cast<double>(m.dense_intermediate_size)), tp));
    local_ns_(g) = kernel(g, models::embedding_work(m, n / tp)) + layers * layer +
                   kernel(g, shard(models::lm_head_work(m, n), tp));
  }
  busy_ns_ += local_ns_;
  return local_ns_.maxCoeff();
}

double DraftPricer::price(const Batch& batch) {
  busy_ns_.setZero();
  double ns = 0.0;
  for (int pass = 0; pass < k_; ++pass) {
    ns += method_ == SpeculativeMethod::mtp ? mtp_pass(batch, pass) : draft_model_pass(batch, pass);
  }
  return ns;
}

}  // namespace epsim::serving
