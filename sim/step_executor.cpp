// SPDX-License-Identifier: Apache-2.0
#include "sim/step_executor.hpp"

#include <algorithm>

#include "models/layer_work.hpp"

namespace epsim::serving {

StepExecutor::StepExecutor(const models::ModelSpec& model, hardware::CostModel& cost, int gpu_offset,
                           hardware::Topology group_topology, const policies::Placement& placement,
                           policies::RoutingPolicy& routing, workloads::RoutingSource& source, double step_overhead_us,
                           hardware::CollectiveModel& collectives, int attention_tp, const hardware::EpCommConfig& comm,
                           core::Rng fanout_rng, const SpeculativeConfig& speculative)
    : model_(model),
      cost_(cost),
      source_(source),
      gpu_offset_(gpu_offset),
      gpus_(group_topology.num_gpus()),
      tp_(attention_tp),
      schedule_(make_step_schedule(PricerInputs{.model = model,
                                                .cost = cost,
                                                .gpu_offset = gpu_offset,
                                                .topology = group_topology,
                                                .placement = placement,
                                                .routing = routing,
                                                .source = source,
                                                .collectives = collectives,
                                                .attention_tp = attention_tp,
                                                .comm = comm,
                                                .fanout_rng = fanout_rng},
                                   step_overhead_us * 1e3)) {
  if (speculative.enabled()) {
    draft_.emplace(model, speculative, cost, gpu_offset, gpus_, attention_tp, collectives, comm);
    busy_ns_.assign(static_cast<std::size_t>(gpus_), 0.0);
  }
}

double StepExecutor::step_power_weight(const Batch& batch) const {
  // A GPU's mean expert call: its share of the step's token-expert pairs over its share of the experts.
  // The expert GEMMs are where MoE layers meet the power cap (ViBE, Section 3); a step's other kernels
  // (attention, projections) follow the same batch size.
  const double pairs =
      static_cast<double>((batch.prefill_tokens + batch.decode_tokens) * model_.top_k) / static_cast<double>(gpus_);
  if (!(pairs > 0.0)) {
    return 0.0;
  }
  const double activated = std::min(pairs, static_cast<double>(model_.routed_experts) / static_cast<double>(gpus_));
  return cost_.power_weight(gpu_offset_, models::expert_ffn_work(model_, pairs, pairs, activated));
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

bool StepExecutor::run(const Batch& batch, const std::vector<RequestState>& requests, core::Time now, int group,
                       std::int64_t step, std::span<Observer* const> observers, StepRecord& out) {
  out = StepRecord{};
  out.group = group;
  out.step = step;
  out.start_ns = now;
  out.prefill_tokens = batch.prefill_tokens;
  out.decode_tokens = batch.decode_tokens;
  out.cached_tokens = batch.cached_tokens;
  out.requests = static_cast<std::int64_t>(batch.entries.size());
  cost_.advance_to(now);
  cost_.begin_step(gpu_offset_, gpus_, now);
  if (cost_.power_limited()) {
    double sum = 0.0;
    for (int g = gpu_offset_; g < gpu_offset_ + gpus_; ++g) {
      const double c = cost_.power_clock(g);
      sum += c;
      out.clock_min = std::min(out.clock_min, c);
    }
    out.clock_mean = sum / static_cast<double>(gpus_);
    power_weight_ = step_power_weight(batch);
  }
  if (!begin_routing(batch, requests, now)) {
    return false;
  }
  schedule_->price(batch, now, group, step, observers, out);
  if (draft_) {
    out.draft_ns = draft_->price(batch);
    out.duration_ns += out.draft_ns;
    const std::span<const double> verify = schedule_->gpu_busy_ns();
    const std::span<const double> drafts = draft_->busy_ns();
    for (std::size_t g = 0; g < busy_ns_.size(); ++g) {
      busy_ns_[g] = verify[g] + drafts[g];
    }
  }
  return true;
}

}  // namespace epsim::serving
