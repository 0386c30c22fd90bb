// SPDX-License-Identifier: Apache-2.0
#pragma once
// Prices one engine step of one EP group (docs/architecture.md): begins the step at the routing source and
// hands the batch to the group's StepSchedule (step_schedule.hpp), which prices its micro-batches with
// MicroBatchPricer (micro_batch_pricer.hpp: every layer in lockstep) and places them on the GPUs.
// Buffers are allocated once, never in the step loop.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "hardware/collective_model.hpp"
#include "hardware/cost_model.hpp"
#include "hardware/ep_comm.hpp"
#include "hardware/topology.hpp"
#include "models/model_spec.hpp"
#include "policies/placement.hpp"
#include "policies/routing_policy.hpp"
#include "sim/batch.hpp"
#include "sim/draft_pricer.hpp"
#include "sim/observer.hpp"
#include "sim/request_state.hpp"
#include "sim/step_schedule.hpp"
#include "workloads/routing_source.hpp"

namespace epsim::serving {

class StepExecutor {
 public:
  /// `gpu_offset`: the group's first GPU in the cost model; `group_topology`: the group's own layout;
  /// `collectives`: how its all-to-alls are costed (chosen when the simulation was built); `comm`: the
  /// wire datatypes, the overlap scheme and, for DeepEP's normal mode, the fan-out sampling (drawn from
  /// `fanout_rng`); `speculative`: the draft passes added to every step with verifying decodes.
  StepExecutor(const models::ModelSpec& model, hardware::CostModel& cost, int gpu_offset,
               hardware::Topology group_topology, const policies::Placement& placement,
               policies::RoutingPolicy& routing, workloads::RoutingSource& source, double step_overhead_us,
               hardware::CollectiveModel& collectives, int attention_tp = 1, const hardware::EpCommConfig& comm = {},
               core::Rng fanout_rng = core::Rng(0), const SpeculativeConfig& speculative = {});

  /// Prices `batch` starting at `now` into `out` (every field but end_ns and gpu_busy_ns, which the
  /// engine sets when the step ends); calls observers' on_layer for every MoE layer. Returns false, and
  /// runs no step, when the routing source is exhausted (a finished, non-looping trace).
  bool run(const Batch& batch, const std::vector<RequestState>& requests, core::Time now, int group, std::int64_t step,
           std::span<Observer* const> observers, StepRecord& out);
  std::span<const double> gpu_busy_ns() const { return draft_ ? busy_ns_ : schedule_->gpu_busy_ns(); }
  /// The step that run() priced from `start` ended at `end`: tells the cost model how busy each GPU was
  /// (a power limiter clocks the next step from it).
  void end_step(core::Time start, core::Time end) {
    cost_.end_step(gpu_offset_, gpu_busy_ns(), start, end, power_weight_);
  }
  /// The last step's compute phases (no collective under way), [start, end) ns from the step's start.
  std::span<const std::pair<double, double>> compute_windows() const { return schedule_->compute_windows(); }
  /// The last step's tokens per expert, [moe layer][expert].
  std::span<const std::int32_t> step_loads() const { return schedule_->step_loads(); }

 private:
  // Hands the batch's requests to the routing source; false when it is exhausted.
  bool begin_routing(const Batch& batch, const std::vector<RequestState>& requests, core::Time now);

  // The step's power draw while busy, from its expert GEMM's intensity (power_limited models only).
  double step_power_weight(const Batch& batch) const;

  const models::ModelSpec& model_;
  hardware::CostModel& cost_;
  workloads::RoutingSource& source_;
  int gpu_offset_;  // the group's first GPU in the cost model
  int gpus_;
  int tp_;                                               // attention tensor parallelism: a DP rank spans tp_ GPUs
  std::vector<workloads::RequestTokens> step_requests_;  // begin_step's view of the batch
  std::unique_ptr<StepSchedule> schedule_;
  std::optional<DraftPricer> draft_;  // speculative decoding: the draft passes after the verify
  std::vector<double> busy_ns_;       // with drafts: the schedule's busy time plus theirs
  double power_weight_ = 1.0;         // the last step's step_power_weight
};

}  // namespace epsim::serving
