#include "sim/serving/step_executor.hpp"

#include <algorithm>
#include <cmath>

#include "hardware/gpu_spec.hpp"
#include "models/layer_work.hpp"
#include "sim/core/apportion.hpp"

namespace epsim::serving {

StepExecutor::StepExecutor(const models::ModelSpec& model, hardware::CostModel& cost, int gpu_offset,
                           hardware::Topology group_topology, const policies::Placement& placement,
                           policies::RoutingPolicy& routing, workloads::RoutingSource& source, double step_overhead_us,
                           hardware::CollectiveCoster* coster, int attention_tp)
    : model_(model),
      cost_(cost),
      coster_(coster),
      gpu_offset_(gpu_offset),
      gpus_(group_topology.num_gpus()),
      tp_(attention_tp),
      topo_(group_topology),
      placement_(placement),
      routing_(routing),
      source_(source),
      step_overhead_ns_(step_overhead_us * 1e3),
      pair_bytes_(static_cast<double>(model.hidden_size * model.activation_bytes)) {
  for (Eigen::ArrayXd* a : {&quota_, &tokens_, &share_, &attention_ns_, &chunked_attention_ns_, &dense_ns_, &router_ns_,
                            &shared_ns_, &lm_head_ns_, &local_ns_, &expert_ns_, &busy_ns_, &pairs_}) {
    a->setZero(gpus_);
  }
  gpu_pairs_.assign(static_cast<std::size_t>(gpus_), 0);
  gpu_activated_.assign(static_cast<std::size_t>(gpus_), 0);
  origin_share_.assign(static_cast<std::size_t>(gpus_), 0);
  node_pairs_.setZero(topo_.nodes());
  node_share_.setZero(topo_.nodes());
  node_bytes_.setZero(topo_.nodes());
  expert_tokens_.assign(static_cast<std::size_t>(model.routed_experts), 0);
  step_loads_.assign(static_cast<std::size_t>(model.num_moe_layers() * model.routed_experts), 0);
  compute_windows_.reserve(static_cast<std::size_t>(2 * model.num_moe_layers() + 1));
  routed_.slot_tokens.assign(static_cast<std::size_t>(placement.layers.front().num_slots()), 0);
  traffic_.resize(gpus_);
  traffic_matrix_.setZero(gpus_, gpus_);
  origin_counts_.assign(static_cast<std::size_t>(gpus_) * static_cast<std::size_t>(model.routed_experts), 0);
}

double StepExecutor::kernel(int local_gpu, const core::KernelWork& w) {
  // A GPU with no tokens for a kernel does not launch it.
  if (w.tokens <= 0.0) {
    return 0.0;
  }
  const double ns = cost_.kernel_ns(gpu_offset_ + local_gpu, w);
  return cost_.has_jitter() ? ns * cost_.jitter(gpu_offset_ + local_gpu) : ns;
}

namespace {
// One GPU's share of a kernel split over `tp` tensor-parallel GPUs (heads, weights, activations).
core::KernelWork shard(core::KernelWork w, double tp) {
  w.flops /= tp;
  w.bytes /= tp;
  return w;
}
}  // namespace

double StepExecutor::all_reduce_ns(double tokens) const {
  // Ring all-reduce of the rank's hidden states over its tp GPUs (scale-up links): each GPU moves
  // 2 (tp - 1) / tp of the bytes, after the collective's alpha.
  if (tp_ == 1 || tokens <= 0.0) {
    return 0.0;
  }
  const double bytes = tokens * static_cast<double>(model_.hidden_size * model_.activation_bytes);
  const double t = static_cast<double>(tp_);
  return topo_.intra().latency_us * 1e3 + 2.0 * (t - 1.0) / t * bytes / topo_.intra().bw_gbps;
}

void StepExecutor::price_local_phases(const Batch& batch) {
  const double tp = static_cast<double>(tp_);
  const bool mla = model_.attention == models::AttentionKind::mla;
  const std::int64_t window = model_.attention_chunk_size;
  for (int rank = 0; rank < gpus_ / tp_; ++rank) {
    models::AttentionBatch prefill;
    models::AttentionBatch decode;
    models::AttentionBatch prefill_chunked;  // the same requests under chunked (local) attention
    models::AttentionBatch decode_chunked;
    double emit = 0.0;
    for (int i = batch.rank_begin[static_cast<std::size_t>(rank)];
         i < batch.rank_begin[static_cast<std::size_t>(rank) + 1]; ++i) {
      const BatchEntry& e = batch.entries[static_cast<std::size_t>(i)];
      models::AttentionBatch& ab = e.prefill ? prefill : decode;
      const auto tokens = static_cast<double>(e.tokens);
      const auto context = static_cast<double>(e.context);
      ab.tokens += tokens;
      ab.score_pairs += models::causal_pairs(context, tokens);
      ab.kv_read_tokens += context;
      emit += e.emits_token ? 1.0 : 0.0;
      if (window > 0) {
        models::AttentionBatch& cb = e.prefill ? prefill_chunked : decode_chunked;
        cb.tokens += tokens;
        cb.score_pairs += models::chunked_causal_pairs(e.context, e.tokens, window);
        cb.kv_read_tokens += models::chunked_kv_read(e.context, window);
      }
    }
    const double tokens = prefill.tokens + decode.tokens;
    // An attention core sharded by heads; MLA's latent KV cache is not split by heads, every TP GPU
    // reads all of it.
    const auto core = [&](const models::AttentionBatch& ab, core::OpKind kind) {
      core::KernelWork w = models::attention_core_work(model_, ab, kind);
      const double kv = (ab.kv_read_tokens + ab.tokens) * models::kv_bytes_per_token_layer(model_);
      w.flops /= tp;
      w.bytes = mla ? kv + (w.bytes - kv) / tp : w.bytes / tp;
      return w;
    };
    const double reduce = all_reduce_ns(tokens);
    for (int g = rank * tp_; g < (rank + 1) * tp_; ++g) {
      tokens_(g) = tokens / tp;  // after attention, the rank's tokens leave for the experts from all its GPUs
      const double projections = kernel(g, shard(models::attention_projection_work(model_, tokens), tp));
      attention_ns_(g) = projections + kernel(g, core(prefill, core::OpKind::attention_prefill)) +
                         kernel(g, core(decode, core::OpKind::attention_decode)) + reduce;
      chunked_attention_ns_(g) = window > 0
                                     ? projections + kernel(g, core(prefill_chunked, core::OpKind::attention_prefill)) +
                                           kernel(g, core(decode_chunked, core::OpKind::attention_decode)) + reduce
                                     : 0.0;
      dense_ns_(g) = model_.num_moe_layers() < model_.num_layers
                         ? kernel(g, shard(models::dense_ffn_work(model_, tokens,
                                                                  static_cast<double>(model_.dense_intermediate_size)),
                                           tp)) +
                               reduce
                         : 0.0;
      router_ns_(g) = kernel(g, models::router_work(model_, tokens / tp));
      shared_ns_(g) = model_.shared_experts > 0
                          ? kernel(g, models::dense_ffn_work(
                                          model_, tokens / tp,
                                          static_cast<double>(model_.moe_intermediate_size * model_.shared_experts)))
                          : 0.0;
      lm_head_ns_(g) = kernel(g, shard(models::lm_head_work(model_, emit), tp));  // vocabulary-parallel
    }
  }
  const double total = tokens_.sum();
  if (total > 0.0) {
    share_ = tokens_ / total;
  } else {
    share_.setZero();
  }
  node_share_.setZero();
  for (int g = 0; g < gpus_; ++g) {
    node_share_(topo_.node_of(g)) += share_(g);
  }
}

void StepExecutor::price_experts(const policies::LayerPlacement& placement) {
  const int slots = placement.slots_per_gpu;
  for (int g = 0; g < gpus_; ++g) {
    std::int64_t tokens = 0;
    std::int32_t activated = 0;
    for (int s = g * slots; s < (g + 1) * slots; ++s) {
      const std::int32_t n = routed_.slot_tokens[static_cast<std::size_t>(s)];
      tokens += n;
      activated += n > 0 ? 1 : 0;
    }
    // The tile depends on the size of the GPU's whole MoE call (vLLM picks its config by M).
    const std::int64_t tile = cost_.moe_tile(gpu_offset_ + g, tokens, slots);
    std::int64_t padded = 0;
    for (int s = g * slots; s < (g + 1) * slots; ++s) {
      padded += hardware::pad_to_tile(routed_.slot_tokens[static_cast<std::size_t>(s)], tile);
    }
    gpu_pairs_[static_cast<std::size_t>(g)] = static_cast<std::int32_t>(tokens);
    gpu_activated_[static_cast<std::size_t>(g)] = activated;
    pairs_(g) = static_cast<double>(tokens);
    expert_ns_(g) = kernel(g, models::expert_ffn_work(model_, static_cast<double>(padded), static_cast<double>(tokens),
                                                      static_cast<double>(activated)));
  }
}

void StepExecutor::derive_origins() {
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

hardware::CollectiveCost StepExecutor::dispatch_cost(const policies::LayerPlacement& placement, bool per_origin) {
  if (routed_.per_origin) {
    // The routing chose each origin's destinations itself.
    for (int o = 0; o < gpus_; ++o) {
      for (int h = 0; h < gpus_; ++h) {
        traffic_matrix_(o, h) =
            routed_.origin_gpu_tokens[static_cast<std::size_t>(o) * static_cast<std::size_t>(gpus_) +
                                      static_cast<std::size_t>(h)] *
            pair_bytes_;
      }
    }
    if (coster_ != nullptr) {
      return coster_->cost(traffic_matrix_, gpu_offset_);
    }
    hardware::aggregate_traffic(topo_, traffic_matrix_, traffic_);
    return hardware::all_to_all_cost(topo_, traffic_);
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
        const double frac = routed_.slot_tokens[static_cast<std::size_t>(s)] / static_cast<double>(n) * pair_bytes_;
        const int h = placement.gpu_of_slot(s);
        for (int o = 0; o < gpus_; ++o) {
          traffic_matrix_(o, h) +=
              origin_counts_[static_cast<std::size_t>(o) * experts + static_cast<std::size_t>(e)] * frac;
        }
      }
    }
    if (coster_ != nullptr) {
      return coster_->cost(traffic_matrix_, gpu_offset_);
    }
    hardware::aggregate_traffic(topo_, traffic_matrix_, traffic_);
    return hardware::all_to_all_cost(topo_, traffic_);
  }
  // Tokens of origin GPU o are a share_o fraction of every expert's tokens (they come from the batch as
  // a whole), so o sends share_o * pairs_h token copies to GPU h; nothing crosses a wire for o == h.
  if (coster_ != nullptr) {
    traffic_matrix_.noalias() = (share_ * pair_bytes_).matrix() * pairs_.matrix().transpose();
    return coster_->cost(traffic_matrix_, gpu_offset_);
  }
  node_pairs_.setZero();
  for (int g = 0; g < gpus_; ++g) {
    node_pairs_(topo_.node_of(g)) += pairs_(g);
  }
  const double all_pairs = pairs_.sum();
  for (int g = 0; g < gpus_; ++g) {
    const int n = topo_.node_of(g);
    traffic_.send_intra(g) = share_(g) * (node_pairs_(n) - pairs_(g)) * pair_bytes_;
    traffic_.send_inter(g) = share_(g) * (all_pairs - node_pairs_(n)) * pair_bytes_;
    traffic_.recv_intra(g) = pairs_(g) * (node_share_(n) - share_(g)) * pair_bytes_;
    traffic_.recv_inter(g) = pairs_(g) * (1.0 - node_share_(n)) * pair_bytes_;
  }
  return hardware::all_to_all_cost(topo_, traffic_);
}

hardware::CollectiveCost StepExecutor::all_gather_cost() {
  // Hidden states, not token-expert pairs: each GPU's tokens go once to every peer, which runs the
  // router on the full batch (the paper's Fig. 7).
  if (coster_ != nullptr) {
    traffic_matrix_.colwise() = (tokens_ * pair_bytes_).matrix();  // row s: GPU s's bytes to every GPU
    return coster_->cost(traffic_matrix_, gpu_offset_);
  }
  node_bytes_.setZero();
  for (int g = 0; g < gpus_; ++g) {
    node_bytes_(topo_.node_of(g)) += tokens_(g) * pair_bytes_;
  }
  const double all_bytes = node_bytes_.sum();
  const auto node_peers = static_cast<double>(topo_.gpus_per_node() - 1);
  const auto off_node_peers = static_cast<double>(gpus_ - topo_.gpus_per_node());
  for (int g = 0; g < gpus_; ++g) {
    const double b = tokens_(g) * pair_bytes_;
    const int n = topo_.node_of(g);
    traffic_.send_intra(g) = b * node_peers;
    traffic_.send_inter(g) = b * off_node_peers;
    traffic_.recv_intra(g) = node_bytes_(n) - b;
    traffic_.recv_inter(g) = all_bytes - node_bytes_(n);
  }
  return hardware::all_to_all_cost(topo_, traffic_);
}

double StepExecutor::barrier(const Eigen::ArrayXd& per_gpu, double& idle_ns) {
  const double slowest = per_gpu.maxCoeff();
  idle_ns += (slowest - per_gpu).sum();
  busy_ns_ += per_gpu;
  return slowest;
}

StepResult StepExecutor::run(const Batch& batch, const std::vector<RequestState>& requests, core::Time now, int group,
                             std::int64_t step, std::span<Observer* const> observers) {
  StepResult res;
  cost_.advance_to(now);
  step_requests_.clear();
  for (int rank = 0; rank < gpus_ / tp_; ++rank) {
    for (int i = batch.rank_begin[static_cast<std::size_t>(rank)];
         i < batch.rank_begin[static_cast<std::size_t>(rank) + 1]; ++i) {
      const BatchEntry& e = batch.entries[static_cast<std::size_t>(i)];
      const RequestState& r = requests[static_cast<std::size_t>(e.request)];
      // A rank's tokens leave for the experts from its GPUs; its first stands for them.
      step_requests_.push_back(workloads::RequestTokens{r.spec.id, r.spec.arrival_ns, e.tokens, e.prefill, rank * tp_});
    }
  }
  source_.begin_step(workloads::StepContext{now, batch.prefill_tokens + batch.decode_tokens, batch.prefill_tokens,
                                            batch.decode_tokens, step_requests_});
  if (source_.exhausted()) {
    res.routed = false;
    return res;
  }
  busy_ns_.setZero();
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
    local_ns_ += model_.is_chunked_attention_layer(layer) ? chunked_attention_ns_ : attention_ns_;
    if (!model_.is_moe_layer(layer)) {
      local_ns_ += dense_ns_;
      continue;
    }
    local_ns_ += router_ns_ + shared_ns_;
    LayerRecord rec;
    rec.group = group;
    rec.step = step;
    rec.layer = layer;
    rec.moe_layer = moe_layer;
    rec.step_start_ns = now;
    rec.offset_ns = res.duration_ns;
    rec.gpu_local_ns = {local_ns_.data(), static_cast<std::size_t>(gpus_)};
    rec.attention_phase_ns = barrier(local_ns_, rec.attention_idle_ns);

    source_.sample(moe_layer, total_tokens, expert_tokens_);
    std::copy(expert_tokens_.begin(), expert_tokens_.end(),
              step_loads_.begin() +
                  static_cast<std::ptrdiff_t>(moe_layer) * static_cast<std::ptrdiff_t>(expert_tokens_.size()));
    bool per_origin = source_.origin_counts(moe_layer, gpus_, total_tokens, origin_counts_);
    std::span<const std::int32_t> origins;
    if (routing_.needs_origins()) {
      if (!per_origin) {
        derive_origins();
      }
      origins = origin_counts_;
    }
    routing_.route(policies::StepLayerLoad{expert_tokens_, batch.prefill_tokens, batch.decode_tokens, origins,
                                           topo_.gpus_per_node()},
                   placement_.layers[static_cast<std::size_t>(moe_layer)], routed_);
    price_experts(placement_.layers[static_cast<std::size_t>(moe_layer)]);
    const hardware::CollectiveCost a2a =
        dispatch_cost(placement_.layers[static_cast<std::size_t>(moe_layer)], per_origin);
    // The combine moves the same payload back along the reversed flows; the cost formula is symmetric
    // in send and receive, so it costs what the all-to-all dispatch costs. metro dispatches by
    // all-gather and combines by this all-to-all.
    const hardware::CollectiveCost dispatch = routed_.all_gather_dispatch ? all_gather_cost() : a2a;
    rec.dispatch_ns = dispatch.time_ns;
    rec.combine_ns = a2a.time_ns;
    rec.intra_bytes = dispatch.intra_bytes + a2a.intra_bytes;
    rec.inter_bytes = dispatch.inter_bytes + a2a.inter_bytes;
    rec.expert_max_ns = barrier(expert_ns_, rec.expert_idle_ns);
    rec.expert_min_ns = expert_ns_.minCoeff();
    rec.gpu_expert_ns = {expert_ns_.data(), static_cast<std::size_t>(gpus_)};
    rec.gpu_tokens = gpu_pairs_;
    rec.gpu_activated = gpu_activated_;

    // Local work runs while no collective does; so do the experts between dispatch and combine.
    compute_windows_.emplace_back(res.duration_ns, res.duration_ns + rec.attention_phase_ns);
    const double experts_start = res.duration_ns + rec.attention_phase_ns + rec.dispatch_ns;
    compute_windows_.emplace_back(experts_start, experts_start + rec.expert_max_ns);
    res.duration_ns += rec.attention_phase_ns + rec.dispatch_ns + rec.expert_max_ns + rec.combine_ns;
    res.barrier_idle_ns += rec.attention_idle_ns + rec.expert_idle_ns;
    res.comm_ns += rec.dispatch_ns + rec.combine_ns;
    res.straggler_gap_sum_ns += rec.straggler_gap_ns();
    res.load_std_sum += std::sqrt((pairs_ - pairs_.mean()).square().mean());
    res.straggler_gap_max_ns = std::max(res.straggler_gap_max_ns, rec.straggler_gap_ns());
    res.intra_bytes += rec.intra_bytes;
    res.inter_bytes += rec.inter_bytes;
    ++res.moe_layers;
    for (Observer* o : observers) {
      o->on_layer(rec);
    }
    local_ns_.setZero();
    ++moe_layer;
  }
  local_ns_ += lm_head_ns_;
  const double tail = barrier(local_ns_, res.barrier_idle_ns);
  compute_windows_.emplace_back(res.duration_ns, res.duration_ns + tail);
  res.duration_ns += tail + step_overhead_ns_;
  return res;
}

}  // namespace epsim::serving
