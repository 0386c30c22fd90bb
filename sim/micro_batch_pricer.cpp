// SPDX-License-Identifier: Apache-2.0
#include "sim/micro_batch_pricer.hpp"

#include <algorithm>
#include <cmath>

#include "core/apportion.hpp"
#include "hardware/gpu_spec.hpp"
#include "models/layer_work.hpp"

namespace epsim::serving {

MicroBatchPricer::MicroBatchPricer(const PricerInputs& in)
    : model_(in.model),
      cost_(in.cost),
      collectives_(in.collectives),
      gpu_offset_(in.gpu_offset),
      gpus_(in.topology.num_gpus()),
      tp_(in.attention_tp),
      topo_(in.topology),
      placement_(in.placement),
      routing_(in.routing),
      routing_needs_origins_(in.routing.needs().origins),
      source_(in.source),
      dispatch_bytes_(hardware::wire_bytes_per_token(in.comm.dispatch_dtype, in.model.hidden_size, in.comm.fp8_block)),
      combine_bytes_(hardware::wire_bytes_per_token(in.comm.combine_dtype, in.model.hidden_size, in.comm.fp8_block)),
      comm_(in.comm),
      expert_prices_(in.model, in.cost, in.gpu_offset, in.topology.num_gpus()) {
  if (in.comm.deduplicates()) {
    fanout_.emplace(in.model, in.topology, in.comm.fanout_samples, in.comm.fanout_refresh_steps, in.fanout_rng);
  }
  for (Eigen::ArrayXd* a :
       {&quota_, &tokens_, &share_, &dense_ns_, &router_ns_, &shared_ns_, &lm_head_ns_, &local_ns_, &expert_ns_,
        &busy_ns_, &pairs_, &gather_bytes_, &elementwise_moe_ns_, &elementwise_dense_ns_}) {
    a->setZero(gpus_);
  }
  for (Eigen::ArrayXd& a : attention_ns_) {
    a.setZero(gpus_);
  }
  layer_kinds_.reserve(static_cast<std::size_t>(model_.num_layers));
  for (std::int64_t l = 0; l < model_.num_layers; ++l) {
    layer_kinds_.push_back(model_.attention_of(l));
    has_kind_[static_cast<std::size_t>(layer_kinds_.back())] = true;
  }
  gpu_pairs_.assign(static_cast<std::size_t>(gpus_), 0);
  tile_rules_.resize(static_cast<std::size_t>(gpus_));
  gpu_activated_.assign(static_cast<std::size_t>(gpus_), 0);
  origin_share_.assign(static_cast<std::size_t>(gpus_), 0);
  expert_tokens_.assign(static_cast<std::size_t>(model_.routed_experts), 0);
  step_loads_.assign(static_cast<std::size_t>(model_.num_moe_layers() * model_.routed_experts), 0);
  compute_windows_.reserve(static_cast<std::size_t>(2 * model_.num_moe_layers() + 1));
  routed_.slot_tokens.assign(static_cast<std::size_t>(placement_.layers.front().num_slots()), 0);
  traffic_matrix_.setZero(gpus_, gpus_);
  origin_counts_.assign(static_cast<std::size_t>(gpus_) * static_cast<std::size_t>(model_.routed_experts), 0);
}

void MicroBatchPricer::follow_fanout(MicroBatchPricer& first) {
  if (fanout_ && first.fanout_) {
    fanout_->follow(*first.fanout_);
  }
}

double MicroBatchPricer::kernel(int local_gpu, const hardware::KernelWork& w) {
  // A GPU with no tokens for a kernel does not launch it.
  if (w.tokens <= 0.0) {
    return 0.0;
  }
  const double ns = cost_.kernel_ns(gpu_offset_ + local_gpu, w);
  return cost_.has_jitter() ? ns * cost_.jitter(gpu_offset_ + local_gpu) : ns;
}

namespace {
// One GPU's share of a kernel split over `tp` tensor-parallel GPUs (heads, weights, activations).
hardware::KernelWork shard(hardware::KernelWork w, double tp) {
  w.flops /= tp;
  w.bytes /= tp;
  w.gemm_n /= tp;  // a GPU computes its share of the output columns (its tiles)
  return w;
}
}  // namespace

double MicroBatchPricer::all_reduce_ns(double tokens) const {
  // All-reduce of the rank's hidden states over its tp GPUs (scale-up links), as NCCL picks it.
  if (tp_ == 1 || tokens <= 0.0) {
    return 0.0;
  }
  const double bytes = tokens * static_cast<double>(model_.hidden_size * model_.activation_bytes);
  return collectives_.tp_all_reduce_ns(topo_.intra(), tp_, bytes);
}

namespace {
// One rank's attention work in one step, per kind of layer and phase.
struct RankAttention {
  models::AttentionBatch prefill, decode;                  // full layers (DSA: the selected pairs)
  models::AttentionBatch prefill_index, decode_index;      // DSA's indexer: every causal pair
  models::AttentionBatch prefill_chunked, decode_chunked;  // chunked (local) layers
  models::AttentionBatch prefill_sliding, decode_sliding;  // sliding-window layers
  models::LinearBatch prefill_linear, decode_linear;       // linear-attention layers
  double emit = 0.0;                                       // tokens the LM head scores
};

void add_entry(const models::ModelSpec& m, const BatchEntry& e, RankAttention& a) {
  const auto tokens = static_cast<double>(e.tokens);
  const auto context = static_cast<double>(e.context);
  // The LM head scores every verify token of a decode (its last token and its drafts), a prompt's last
  // token only.
  a.emit += e.prefill ? (e.emits_token ? 1.0 : 0.0) : tokens;
  const auto add = [&](models::AttentionBatch& ab, double pairs, double kv_read) {
    ab.tokens += tokens;
    ab.score_pairs += pairs;
    ab.kv_read_tokens += kv_read;
  };
  if (m.sparse_attention()) {
    add(e.prefill ? a.prefill_index : a.decode_index, models::causal_pairs(context, tokens), context);
    // A decode reads its index_topk selected entries; a prefill chunk's queries select among the whole
    // context (each cached entry read once).
    const auto topk = static_cast<double>(m.index_topk);
    add(e.prefill ? a.prefill : a.decode, models::capped_causal_pairs(e.context, e.tokens, m.index_topk),
        e.prefill ? context : std::min(context, topk));
  } else {
    add(e.prefill ? a.prefill : a.decode, models::causal_pairs(context, tokens), context);
  }
  if (m.attention_chunk_size > 0) {
    add(e.prefill ? a.prefill_chunked : a.decode_chunked,
        models::chunked_causal_pairs(e.context, e.tokens, m.attention_chunk_size),
        models::chunked_kv_read(e.context, m.attention_chunk_size));
  }
  if (m.sliding_window > 0) {
    add(e.prefill ? a.prefill_sliding : a.decode_sliding,
        models::capped_causal_pairs(e.context, e.tokens, m.sliding_window),
        std::min(context, static_cast<double>(m.sliding_window - 1)));
  }
  if (m.linear_num_key_heads > 0) {
    models::LinearBatch& lb = e.prefill ? a.prefill_linear : a.decode_linear;
    lb.tokens += tokens;
    lb.requests += 1.0;
  }
}
}  // namespace

void MicroBatchPricer::price_local_phases(const Batch& batch) {
  const double tp = static_cast<double>(tp_);
  const bool mla = model_.attention == models::AttentionKind::mla;
  for (int rank = 0; rank < gpus_ / tp_; ++rank) {
    RankAttention a;
    for (int i = batch.rank_begin[static_cast<std::size_t>(rank)];
         i < batch.rank_begin[static_cast<std::size_t>(rank) + 1]; ++i) {
      add_entry(model_, batch.entries[static_cast<std::size_t>(i)], a);
    }
    const double tokens = a.prefill.tokens + a.decode.tokens;
    // An attention core sharded by heads; MLA's latent KV cache (and DSA's indexer keys) is not split by
    // heads, every TP GPU reads all of it.
    const auto core = [&](const models::AttentionBatch& ab, hardware::OpKind kind) {
      hardware::KernelWork w = models::attention_core_work(model_, ab, kind);
      const double kv = (ab.kv_read_tokens + ab.tokens) * models::attention_kv_bytes_per_token(model_);
      w.flops /= tp;
      w.bytes = mla ? kv + (w.bytes - kv) / tp : w.bytes / tp;
      return w;
    };
    const auto indexer = [&](const models::AttentionBatch& ab) {
      hardware::KernelWork w = models::indexer_work(model_, ab);
      const double keys = (ab.kv_read_tokens + ab.tokens) * models::index_key_bytes_per_token(model_);
      w.flops /= tp;
      w.bytes = keys + (w.bytes - keys) / tp;
      return w;
    };
    const double reduce = all_reduce_ns(tokens);
    for (int g = rank * tp_; g < (rank + 1) * tp_; ++g) {
      tokens_(g) = tokens / tp;  // after attention, the rank's tokens leave for the experts from all its GPUs
      const double projections = kernel(g, shard(models::attention_projection_work(model_, tokens), tp));
      const auto softmax = [&](const models::AttentionBatch& p, const models::AttentionBatch& d) {
        return projections + kernel(g, core(p, hardware::OpKind::attention_prefill)) +
               kernel(g, core(d, hardware::OpKind::attention_decode)) + reduce;
      };
      const auto kind_ns = [&](models::LayerAttention k) -> double& {
        return attention_ns_[static_cast<std::size_t>(k)](g);
      };
      if (has_kind_[static_cast<std::size_t>(models::LayerAttention::full)]) {
        kind_ns(models::LayerAttention::full) =
            softmax(a.prefill, a.decode) +
            (model_.sparse_attention() ? kernel(g, indexer(a.prefill_index)) + kernel(g, indexer(a.decode_index))
                                       : 0.0);
      }
      if (has_kind_[static_cast<std::size_t>(models::LayerAttention::chunked)]) {
        kind_ns(models::LayerAttention::chunked) = softmax(a.prefill_chunked, a.decode_chunked);
      }
      if (has_kind_[static_cast<std::size_t>(models::LayerAttention::sliding)]) {
        kind_ns(models::LayerAttention::sliding) = softmax(a.prefill_sliding, a.decode_sliding);
      }
      if (has_kind_[static_cast<std::size_t>(models::LayerAttention::linear)]) {
        kind_ns(models::LayerAttention::linear) =
            kernel(g, shard(models::linear_projection_work(model_, tokens), tp)) +
            kernel(g,
                   shard(models::linear_attention_work(model_, a.prefill_linear, hardware::OpKind::attention_prefill),
                         tp)) +
            kernel(g, shard(models::linear_attention_work(model_, a.decode_linear, hardware::OpKind::attention_decode),
                            tp)) +
            reduce;
      }
      dense_ns_(g) = model_.num_moe_layers() < model_.num_layers
                         ? kernel(g, shard(models::dense_ffn_work(model_, tokens,
                                                                  static_cast<double>(model_.dense_intermediate_size)),
                                           tp)) +
                               reduce
                         : 0.0;
      router_ns_(g) = kernel(g, models::router_work(model_, tokens / tp));
      shared_ns_(g) = model_.shared_width() > 0.0 ? kernel(g, models::shared_expert_work(model_, tokens / tp)) : 0.0;
      lm_head_ns_(g) = kernel(g, shard(models::lm_head_work(model_, a.emit), tp));  // vocabulary-parallel
      if (model_.elementwise_kernels) {
        // Low-latency dispatch writes the experts' masked layout itself: no permutation kernels.
        const bool permute = !comm_.low_latency_kernels(step_prefills_);
        elementwise_moe_ns_(g) = kernel(g, models::elementwise_work(model_, tokens / tp, true, permute));
        elementwise_dense_ns_(g) = kernel(g, models::elementwise_work(model_, tokens / tp, false, false));
      }
    }
  }
  const double total = tokens_.sum();
  if (total > 0.0) {
    share_ = tokens_ / total;
  } else {
    share_.setZero();
  }
}

void MicroBatchPricer::price_experts(const policies::LayerPlacement& placement) {
  const int slots = placement.slots_per_gpu;
  const bool jitter = cost_.has_jitter();
  const std::int32_t* slot_tokens = routed_.slot_tokens.data();
  for (int g = 0; g < gpus_; ++g) {
    // One pass over the GPU's slots pads to both tiles: which one applies depends on the sum
    // (vLLM picks its config by the size M of the GPU's whole MoE call).
    const hardware::MoeTileRule& rule = tile_rules_[static_cast<std::size_t>(g)];
    const std::int32_t* n = slot_tokens + static_cast<std::ptrdiff_t>(g) * slots;
    std::int64_t tokens = 0;
    std::int64_t padded_small = 0;
    std::int64_t padded_large = 0;
    std::int32_t activated = 0;
    for (int s = 0; s < slots; ++s) {
      tokens += n[s];
      activated += n[s] > 0 ? 1 : 0;
      padded_small += hardware::pad_to_tile(n[s], rule.small);
      padded_large += hardware::pad_to_tile(n[s], rule.large);
    }
    const std::int64_t padded = tokens <= rule.limit(slots) ? padded_small : padded_large;
    gpu_pairs_[static_cast<std::size_t>(g)] = static_cast<std::int32_t>(tokens);
    gpu_activated_[static_cast<std::size_t>(g)] = activated;
    pairs_(g) = static_cast<double>(tokens);
    // As kernel(): no launch (0 ns, no jitter draw) without tokens; the jitter draw after the (memoised)
    // deterministic price.
    const double ns = expert_prices_.ns(g, padded, tokens, activated);
    expert_ns_(g) = jitter && tokens > 0 ? ns * cost_.jitter(gpu_offset_ + g) : ns;
  }
}

void MicroBatchPricer::derive_origins() {
  // Each GPU's tokens are its share of every expert's (they come from the batch as a whole): share_o x
  // n_e, rounded by largest remainder so that every expert's origins sum to its tokens (ties: low GPU).
  const auto experts = static_cast<std::size_t>(model_.routed_experts);
  for (std::size_t e = 0; e < experts; ++e) {
    const std::int32_t n = expert_tokens_[e];
    quota_ = share_ * static_cast<double>(n);
    core::apportion(n, {quota_.data(), static_cast<std::size_t>(gpus_)}, origin_share_);
    for (std::size_t o = 0; o < static_cast<std::size_t>(gpus_); ++o) {
      origin_counts_[o * experts + e] = origin_share_[o];
    }
  }
}

hardware::EpTraffic MicroBatchPricer::dispatch_traffic(const policies::LayerPlacement& placement, bool per_origin,
                                                       int moe_layer, std::int64_t step) {
  hardware::EpTraffic t{&share_, &pairs_, nullptr, nullptr, nullptr, step_prefills_};
  if (fanout_) {
    fanout_->update(moe_layer, step, routed_.slot_tokens, expert_tokens_, placement, source_);
    t.gpu_fanout = &fanout_->gpu_fanout();
    t.node_fanout = &fanout_->node_fanout();
  }
  if (routed_.per_origin) {
    // The routing chose each origin's destinations itself.
    for (int o = 0; o < gpus_; ++o) {
      for (int h = 0; h < gpus_; ++h) {
        traffic_matrix_(o, h) =
            routed_.origin_gpu_tokens[static_cast<std::size_t>(o) * static_cast<std::size_t>(gpus_) +
                                      static_cast<std::size_t>(h)];
      }
    }
    t.pair_matrix = &traffic_matrix_;
    return t;
  }
  if (per_origin) {
    // Known origins: origin o's tokens of expert e follow e's split over its replicas.
    traffic_matrix_.setZero();
    const auto experts = static_cast<std::size_t>(placement.num_experts);
    for (int e = 0; e < placement.num_experts; ++e) {
      const std::int32_t n = expert_tokens_[static_cast<std::size_t>(e)];
      if (n == 0) {
        continue;
      }
      for (const int s : placement.replicas(e)) {
        const double frac = routed_.slot_tokens[static_cast<std::size_t>(s)] / static_cast<double>(n);
        const int h = placement.gpu_of_slot(s);
        for (int o = 0; o < gpus_; ++o) {
          traffic_matrix_(o, h) +=
              origin_counts_[static_cast<std::size_t>(o) * experts + static_cast<std::size_t>(e)] * frac;
        }
      }
    }
    t.pair_matrix = &traffic_matrix_;
    return t;
  }
  // Tokens of origin GPU o are a share_o fraction of every expert's tokens (they come from the batch as
  // a whole), so o sends share_o * pairs_h token copies to GPU h.
  return t;
}

double MicroBatchPricer::barrier(const Eigen::ArrayXd& per_gpu, double& idle_ns) {
  const double slowest = per_gpu.maxCoeff();
  idle_ns += (slowest - per_gpu).sum();
  busy_ns_ += per_gpu;
  return slowest;
}

void MicroBatchPricer::price_moe_layer(const Batch& batch, std::int64_t total_tokens, LayerRecord& rec,
                                       StepRecord& out) {
  const policies::LayerPlacement& placement = placement_.layers[static_cast<std::size_t>(rec.moe_layer)];
  rec.attention_phase_ns = barrier(local_ns_, rec.attention_idle_ns);
  source_.sample(rec.moe_layer, total_tokens, expert_tokens_);
  std::copy(expert_tokens_.begin(), expert_tokens_.end(),
            step_loads_.begin() +
                static_cast<std::ptrdiff_t>(rec.moe_layer) * static_cast<std::ptrdiff_t>(expert_tokens_.size()));
  const bool per_origin = source_.origin_counts(rec.moe_layer, gpus_, total_tokens, origin_counts_);
  std::span<const std::int32_t> origins;
  if (routing_needs_origins_) {
    if (!per_origin) {
      derive_origins();
    }
    origins = origin_counts_;
  }
  routing_.route(policies::StepLayerLoad{expert_tokens_, batch.prefill_tokens, batch.decode_tokens, origins,
                                         topo_.gpus_per_node()},
                 placement, routed_);
  price_experts(placement);
  const hardware::EpTraffic traffic = dispatch_traffic(placement, per_origin, rec.moe_layer, rec.step);
  // The combine moves the results back along the reversed flows, in its own datatype; the cost formulas
  // are symmetric in send and receive. metro dispatches by all-gather (hidden states, not token-expert
  // pairs: each GPU's tokens go once to every peer, which runs the router on the full batch, the paper's
  // Fig. 7) and combines by the exchange.
  hardware::CollectiveCost combine;
  hardware::CollectiveCost dispatch;
  if (routed_.all_gather_dispatch) {
    combine = collectives_.ep_exchange(traffic, combine_bytes_);
    gather_bytes_ = tokens_ * dispatch_bytes_;
    dispatch = collectives_.all_gather(gather_bytes_);
  } else {
    const auto both = collectives_.ep_exchange_pair(traffic, dispatch_bytes_, combine_bytes_);
    dispatch = both.dispatch;
    combine = both.combine;
  }
  if (exchange_factor_ != 1.0) {
    // Beside other work on the GPU (two-batch overlap: the other half's GEMMs, ep_comm.hpp); not an all-gather.
    combine.time_ns *= exchange_factor_;
    if (!routed_.all_gather_dispatch) {
      dispatch.time_ns *= exchange_factor_;
    }
  }
  rec.dispatch_ns = dispatch.time_ns;
  rec.combine_ns = combine.time_ns;
  rec.intra_bytes = dispatch.intra_bytes + combine.intra_bytes;
  rec.inter_bytes = dispatch.inter_bytes + combine.inter_bytes;
  rec.expert_max_ns = barrier(expert_ns_, rec.expert_idle_ns);
  rec.expert_min_ns = expert_ns_.minCoeff();
  rec.gpu_expert_ns = {expert_ns_.data(), static_cast<std::size_t>(gpus_)};
  rec.gpu_tokens = gpu_pairs_;
  rec.gpu_activated = gpu_activated_;

  // Local work runs while no collective does; so do the experts between dispatch and combine.
  compute_windows_.emplace_back(out.duration_ns, out.duration_ns + rec.attention_phase_ns);
  const double experts_start = out.duration_ns + rec.attention_phase_ns + rec.dispatch_ns;
  compute_windows_.emplace_back(experts_start, experts_start + rec.expert_max_ns);
  out.duration_ns += rec.attention_phase_ns + rec.dispatch_ns + rec.expert_max_ns + rec.combine_ns;
  out.barrier_idle_ns += rec.attention_idle_ns + rec.expert_idle_ns;
  out.comm_ns += rec.dispatch_ns + rec.combine_ns;
  out.straggler_gap_sum_ns += rec.straggler_gap_ns();
  out.straggler_gap_max_ns = std::max(out.straggler_gap_max_ns, rec.straggler_gap_ns());
  out.intra_bytes += rec.intra_bytes;
  out.inter_bytes += rec.inter_bytes;
  ++out.moe_layers;
}

void MicroBatchPricer::price(const Batch& batch, const MicroBatchStep& step, std::span<Observer* const> observers,
                             StepRecord& out) {
  busy_ns_.setZero();
  expert_prices_.refresh();
  for (int g = 0; g < gpus_; ++g) {
    tile_rules_[static_cast<std::size_t>(g)] = cost_.moe_tile_rule(gpu_offset_ + g);
  }
  step_prefills_ = step.step_prefills;
  exchange_factor_ = step.exchange_factor;
  local_ns_.setZero();
  compute_windows_.clear();
  price_local_phases(batch);
  const auto total_tokens = static_cast<std::int64_t>(tokens_.sum());
  // Embedding lookup of the step's tokens: a gather, memory-bound.
  for (int g = 0; g < gpus_; ++g) {
    local_ns_(g) = kernel(g, models::embedding_work(model_, tokens_(g)));
  }
  int moe_layer = 0;
  for (int layer = 0; layer < model_.num_layers; ++layer) {
    local_ns_ += attention_ns_[static_cast<std::size_t>(layer_kinds_[static_cast<std::size_t>(layer)])];
    if (!model_.is_moe_layer(layer)) {
      local_ns_ += dense_ns_ + elementwise_dense_ns_;
      continue;
    }
    local_ns_ += router_ns_ + shared_ns_ + elementwise_moe_ns_;
    LayerRecord rec;
    rec.group = step.group;
    rec.step = step.step;
    rec.layer = layer;
    rec.moe_layer = moe_layer;
    rec.step_start_ns = step.now;
    rec.offset_ns = out.duration_ns;
    rec.gpu_local_ns = {local_ns_.data(), static_cast<std::size_t>(gpus_)};
    price_moe_layer(batch, total_tokens, rec, out);
    for (Observer* o : observers) {
      o->on_layer(rec);
    }
    local_ns_.setZero();
    ++moe_layer;
  }
  local_ns_ += lm_head_ns_;
  const double tail = barrier(local_ns_, out.barrier_idle_ns);
  tail_ns_ = tail;
  compute_windows_.emplace_back(out.duration_ns, out.duration_ns + tail);
  out.duration_ns += tail + step.overhead_ns;
}

}  // namespace epsim::serving
