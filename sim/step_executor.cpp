#include "sim/step_executor.hpp"

#include <algorithm>
#include <cmath>

#include "core/apportion.hpp"
#include "hardware/gpu_spec.hpp"
#include "models/layer_work.hpp"

namespace epsim::serving {

StepExecutor::StepExecutor(const models::ModelSpec& model, hardware::CostModel& cost, int gpu_offset,
                           hardware::Topology group_topology, const policies::Placement& placement,
                           policies::RoutingPolicy& routing, workloads::RoutingSource& source, double step_overhead_us,
                           hardware::CollectiveModel& collectives, int attention_tp, const hardware::EpCommConfig& comm,
                           core::Rng fanout_rng)
    : model_(model),
      cost_(cost),
      collectives_(collectives),
      gpu_offset_(gpu_offset),
      gpus_(group_topology.num_gpus()),
      tp_(attention_tp),
      topo_(group_topology),
      placement_(placement),
      routing_(routing),
      routing_needs_origins_(routing.needs().origins),
      source_(source),
      step_overhead_ns_(step_overhead_us * 1e3),
      dispatch_bytes_(hardware::wire_bytes_per_token(comm.dispatch_dtype, model.hidden_size, comm.fp8_block)),
      combine_bytes_(hardware::wire_bytes_per_token(comm.combine_dtype, model.hidden_size, comm.fp8_block)),
      comm_(comm) {
  if (comm.deduplicates()) {
    fanout_.emplace(model, group_topology, comm.fanout_samples, comm.fanout_refresh_steps, fanout_rng);
  }
  if (comm.overlap == hardware::OverlapMode::two_batch) {
    hardware::EpCommConfig half = comm;
    half.overlap = hardware::OverlapMode::none;
    for (std::size_t m = 0; m < 2; ++m) {
      halves_[m] = std::make_unique<StepExecutor>(model, cost, gpu_offset, group_topology, placement, routing, source,
                                                  0.0, collectives, attention_tp, half, fanout_rng);
      halves_[m]->keep_layers();
    }
    sum_local_.setZero(gpus_);
    sum_expert_.setZero(gpus_);
    sum_tokens_.assign(static_cast<std::size_t>(gpus_), 0);
    sum_activated_.assign(static_cast<std::size_t>(gpus_), 0);
  }
  for (Eigen::ArrayXd* a : {&quota_, &tokens_, &share_, &attention_ns_, &chunked_attention_ns_, &dense_ns_, &router_ns_,
                            &shared_ns_, &lm_head_ns_, &local_ns_, &expert_ns_, &busy_ns_, &pairs_, &gather_bytes_,
                            &elementwise_moe_ns_, &elementwise_dense_ns_}) {
    a->setZero(gpus_);
  }
  gpu_pairs_.assign(static_cast<std::size_t>(gpus_), 0);
  gpu_activated_.assign(static_cast<std::size_t>(gpus_), 0);
  origin_share_.assign(static_cast<std::size_t>(gpus_), 0);
  expert_tokens_.assign(static_cast<std::size_t>(model.routed_experts), 0);
  step_loads_.assign(static_cast<std::size_t>(model.num_moe_layers() * model.routed_experts), 0);
  compute_windows_.reserve(static_cast<std::size_t>(2 * model.num_moe_layers() + 1));
  routed_.slot_tokens.assign(static_cast<std::size_t>(placement.layers.front().num_slots()), 0);
  traffic_matrix_.setZero(gpus_, gpus_);
  origin_counts_.assign(static_cast<std::size_t>(gpus_) * static_cast<std::size_t>(model.routed_experts), 0);
}

void StepExecutor::keep_layers() {
  keep_layers_ = true;
  const auto layers = static_cast<std::size_t>(model_.num_moe_layers());
  half_layers_.assign(layers, HalfLayer{});
  kept_records_.assign(layers, LayerRecord{});
  kept_local_.setZero(gpus_, static_cast<Eigen::Index>(layers));
  kept_expert_.setZero(gpus_, static_cast<Eigen::Index>(layers));
  kept_tokens_.assign(layers * static_cast<std::size_t>(gpus_), 0);
  kept_activated_.assign(layers * static_cast<std::size_t>(gpus_), 0);
}

double StepExecutor::kernel(int local_gpu, const hardware::KernelWork& w) {
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
  return w;
}
}  // namespace

double StepExecutor::all_reduce_ns(double tokens) const {
  // All-reduce of the rank's hidden states over its tp GPUs (scale-up links), ring or NVLink SHARP.
  if (tp_ == 1 || tokens <= 0.0) {
    return 0.0;
  }
  const double bytes = tokens * static_cast<double>(model_.hidden_size * model_.activation_bytes);
  return collectives_.tp_all_reduce_ns(topo_.intra(), tp_, bytes);
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
    const auto core = [&](const models::AttentionBatch& ab, hardware::OpKind kind) {
      hardware::KernelWork w = models::attention_core_work(model_, ab, kind);
      const double kv = (ab.kv_read_tokens + ab.tokens) * models::kv_bytes_per_token_layer(model_);
      w.flops /= tp;
      w.bytes = mla ? kv + (w.bytes - kv) / tp : w.bytes / tp;
      return w;
    };
    const double reduce = all_reduce_ns(tokens);
    for (int g = rank * tp_; g < (rank + 1) * tp_; ++g) {
      tokens_(g) = tokens / tp;  // after attention, the rank's tokens leave for the experts from all its GPUs
      const double projections = kernel(g, shard(models::attention_projection_work(model_, tokens), tp));
      attention_ns_(g) = projections + kernel(g, core(prefill, hardware::OpKind::attention_prefill)) +
                         kernel(g, core(decode, hardware::OpKind::attention_decode)) + reduce;
      chunked_attention_ns_(g) =
          window > 0 ? projections + kernel(g, core(prefill_chunked, hardware::OpKind::attention_prefill)) +
                           kernel(g, core(decode_chunked, hardware::OpKind::attention_decode)) + reduce
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

hardware::EpTraffic StepExecutor::dispatch_traffic(const policies::LayerPlacement& placement, bool per_origin,
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

double StepExecutor::barrier(const Eigen::ArrayXd& per_gpu, double& idle_ns) {
  const double slowest = per_gpu.maxCoeff();
  idle_ns += (slowest - per_gpu).sum();
  busy_ns_ += per_gpu;
  return slowest;
}

bool StepExecutor::begin_routing(const Batch& batch, const std::vector<RequestState>& requests, core::Time now) {
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
  return !source_.exhausted();
}

void StepExecutor::price_moe_layer(const Batch& batch, std::int64_t total_tokens, LayerRecord& rec, StepRecord& out) {
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
  if (keep_layers_ && comm_.normal_kernels(step_prefills_)) {
    // A two-batch half: DeepEP's normal kernels share the GPU with the other half's GEMMs (ep_comm.hpp).
    combine.time_ns *= comm_.overlap_exchange_factor;
    if (!routed_.all_gather_dispatch) {
      dispatch.time_ns *= comm_.overlap_exchange_factor;
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

bool StepExecutor::run(const Batch& batch, const std::vector<RequestState>& requests, core::Time now, int group,
                       std::int64_t step, std::span<Observer* const> observers, StepRecord& out) {
  out = StepRecord{};
  out.group = group;
  out.step = step;
  out.start_ns = now;
  out.prefill_tokens = batch.prefill_tokens;
  out.decode_tokens = batch.decode_tokens;
  out.requests = static_cast<std::int64_t>(batch.entries.size());
  cost_.advance_to(now);
  if (!begin_routing(batch, requests, now)) {
    return false;
  }
  if (halves_[0]) {
    price_two_batches(batch, now, group, step, observers, out);
  } else {
    price_step(batch, now, group, step, observers, out);
  }
  return true;
}

void StepExecutor::add_low_latency_kernels() {
  // DeepEP's low-latency dispatch and combine free the SMs while their messages fly, but their send and
  // receive kernels run on the compute stream: a dispatch's before the experts it feeds, a combine's before
  // the next layer's local work (the last one's before the tail).
  const double dispatch_ns = comm_.compute_dispatch_us * 1e3;
  const double combine_ns = comm_.compute_combine_us * 1e3;
  for (const auto& h : halves_) {
    std::vector<HalfLayer>& layers = h->half_layers_;
    for (std::size_t l = 0; l < layers.size(); ++l) {
      layers[l].expert_ns += dispatch_ns;
      (l + 1 < layers.size() ? layers[l + 1].local_ns : h->tail_ns_) += combine_ns;
    }
  }
}

void StepExecutor::price_two_batches(const Batch& batch, core::Time now, int group, std::int64_t step,
                                     std::span<Observer* const> observers, StepRecord& out) {
  split_batch(batch, half_batches_[0], half_batches_[1]);
  busy_ns_.setZero();
  std::fill(step_loads_.begin(), step_loads_.end(), 0);
  for (std::size_t m = 0; m < 2; ++m) {
    StepExecutor& h = *halves_[m];
    h.step_prefills_ = batch.prefill_tokens > 0;
    h.price_step(half_batches_[m], now, group, step, {}, half_records_[m]);
    busy_ns_ += h.busy_ns_;
    for (std::size_t i = 0; i < step_loads_.size(); ++i) {
      step_loads_[i] += h.step_loads_[i];
    }
    out.barrier_idle_ns += half_records_[m].barrier_idle_ns;
    out.comm_ns += half_records_[m].comm_ns;
    out.straggler_gap_sum_ns += half_records_[m].straggler_gap_sum_ns;
    out.straggler_gap_max_ns = std::max(out.straggler_gap_max_ns, half_records_[m].straggler_gap_max_ns);
    out.intra_bytes += half_records_[m].intra_bytes;
    out.inter_bytes += half_records_[m].inter_bytes;
  }
  out.moe_layers = half_records_[0].moe_layers;
  const double compute_factor = comm_.overlap_compute_factor;
  if (compute_factor != 1.0 && comm_.normal_kernels(batch.prefill_tokens > 0)) {
    // The GEMMs run on the SMs the communication kernels leave them.
    for (const auto& h : halves_) {
      for (HalfLayer& l : h->half_layers_) {
        l.local_ns *= compute_factor;
        l.expert_ns *= compute_factor;
      }
      h->tail_ns_ *= compute_factor;
    }
  }
  if (comm_.low_latency_kernels(batch.prefill_tokens > 0)) {
    add_low_latency_kernels();
  }
  schedule_two_batches(halves_[0]->half_layers_, halves_[1]->half_layers_, halves_[0]->tail_ns_, halves_[1]->tail_ns_,
                       timeline_);
  compute_windows_.assign(timeline_.compute.begin(), timeline_.compute.end());
  out.duration_ns = timeline_.end_ns + step_overhead_ns_;
  // Observers see each MoE layer once, the halves' work added up (per GPU too).
  for (std::size_t l = 0; l < halves_[0]->kept_records_.size(); ++l) {
    const LayerRecord& a = halves_[0]->kept_records_[l];
    const LayerRecord& b = halves_[1]->kept_records_[l];
    LayerRecord rec = a;
    rec.offset_ns = timeline_.layer_start[l];
    rec.attention_phase_ns += b.attention_phase_ns;
    rec.attention_idle_ns += b.attention_idle_ns;
    rec.dispatch_ns += b.dispatch_ns;
    rec.combine_ns += b.combine_ns;
    rec.expert_max_ns += b.expert_max_ns;
    rec.expert_min_ns += b.expert_min_ns;
    rec.expert_idle_ns += b.expert_idle_ns;
    rec.intra_bytes += b.intra_bytes;
    rec.inter_bytes += b.inter_bytes;
    const auto col = static_cast<Eigen::Index>(l);
    sum_local_ = halves_[0]->kept_local_.col(col) + halves_[1]->kept_local_.col(col);
    sum_expert_ = halves_[0]->kept_expert_.col(col) + halves_[1]->kept_expert_.col(col);
    for (std::size_t g = 0; g < static_cast<std::size_t>(gpus_); ++g) {
      const std::size_t i = l * static_cast<std::size_t>(gpus_) + g;
      sum_tokens_[g] = halves_[0]->kept_tokens_[i] + halves_[1]->kept_tokens_[i];
      sum_activated_[g] = std::max(halves_[0]->kept_activated_[i], halves_[1]->kept_activated_[i]);
    }
    rec.gpu_local_ns = {sum_local_.data(), static_cast<std::size_t>(gpus_)};
    rec.gpu_expert_ns = {sum_expert_.data(), static_cast<std::size_t>(gpus_)};
    rec.gpu_tokens = sum_tokens_;
    rec.gpu_activated = sum_activated_;
    for (Observer* o : observers) {
      o->on_layer(rec);
    }
  }
}

void StepExecutor::price_step(const Batch& batch, core::Time now, int group, std::int64_t step,
                              std::span<Observer* const> observers, StepRecord& out) {
  if (keep_layers_) {
    out = StepRecord{};
  }
  busy_ns_.setZero();
  if (!keep_layers_) {
    step_prefills_ = batch.prefill_tokens > 0;  // a half takes its whole batch's (its parent sets it)
  }
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
      local_ns_ += dense_ns_ + elementwise_dense_ns_;
      continue;
    }
    local_ns_ += router_ns_ + shared_ns_ + elementwise_moe_ns_;
    LayerRecord rec;
    rec.group = group;
    rec.step = step;
    rec.layer = layer;
    rec.moe_layer = moe_layer;
    rec.step_start_ns = now;
    rec.offset_ns = out.duration_ns;
    rec.gpu_local_ns = {local_ns_.data(), static_cast<std::size_t>(gpus_)};
    price_moe_layer(batch, total_tokens, rec, out);
    if (keep_layers_) {
      const auto l = static_cast<std::size_t>(moe_layer);
      half_layers_[l] = HalfLayer{rec.attention_phase_ns, rec.dispatch_ns, rec.expert_max_ns, rec.combine_ns};
      kept_records_[l] = rec;
      kept_local_.col(moe_layer) = local_ns_;
      kept_expert_.col(moe_layer) = expert_ns_;
      std::copy(gpu_pairs_.begin(), gpu_pairs_.end(), kept_tokens_.begin() + static_cast<std::ptrdiff_t>(l * gpus_));
      std::copy(gpu_activated_.begin(), gpu_activated_.end(),
                kept_activated_.begin() + static_cast<std::ptrdiff_t>(l * gpus_));
    }
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
  out.duration_ns += tail + step_overhead_ns_;
}

}  // namespace epsim::serving
