#pragma once
// Prices one engine step of one EP group (docs/architecture.md): every layer in lockstep. Per-GPU local work
// (attention, dense FFN, router, shared experts) accumulates until the next collective; the dispatch
// all-to-all starts when the slowest GPU is ready (barrier), expert FFNs run per GPU on the tokens the
// routing policy gave them, and the combine all-to-all starts when the slowest expert GPU is done. A
// policy that needs every token everywhere (metro) gets an all-gather dispatch instead.
// Layer timing is computed directly; buffers are allocated once, never in the step loop.
#include <Eigen/Core>
#include <array>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "hardware/all_to_all.hpp"
#include "hardware/collective_model.hpp"
#include "hardware/cost_model.hpp"
#include "hardware/ep_comm.hpp"
#include "hardware/topology.hpp"
#include "models/model_spec.hpp"
#include "policies/placement.hpp"
#include "policies/routing_policy.hpp"
#include "sim/batch.hpp"
#include "sim/fanout_estimator.hpp"
#include "sim/observer.hpp"
#include "sim/overlap_schedule.hpp"
#include "sim/request_state.hpp"
#include "workloads/routing_source.hpp"

namespace epsim::serving {

class StepExecutor {
 public:
  /// `gpu_offset`: the group's first GPU in the cost model; `group_topology`: the group's own layout;
  /// `collectives`: how its all-to-alls are costed (chosen when the simulation was built); `comm`: the
  /// wire datatypes and, for DeepEP's normal mode, the fan-out sampling (drawn from `fanout_rng`).
  StepExecutor(const models::ModelSpec& model, hardware::CostModel& cost, int gpu_offset,
               hardware::Topology group_topology, const policies::Placement& placement,
               policies::RoutingPolicy& routing, workloads::RoutingSource& source, double step_overhead_us,
               hardware::CollectiveModel& collectives, int attention_tp = 1, const hardware::EpCommConfig& comm = {},
               core::Rng fanout_rng = core::Rng(0));

  /// Prices `batch` starting at `now` into `out` (every field but end_ns and gpu_busy_ns, which the
  /// engine sets when the step ends); calls observers' on_layer for every MoE layer. Returns false, and
  /// runs no step, when the routing source is exhausted (a finished, non-looping trace).
  bool run(const Batch& batch, const std::vector<RequestState>& requests, core::Time now, int group, std::int64_t step,
           std::span<Observer* const> observers, StepRecord& out);
  std::span<const double> gpu_busy_ns() const { return {busy_ns_.data(), static_cast<std::size_t>(busy_ns_.size())}; }
  /// The last step's compute phases (no collective under way), [start, end) ns from the step's start.
  std::span<const std::pair<double, double>> compute_windows() const { return compute_windows_; }
  /// The last step's tokens per expert, [moe layer][expert].
  std::span<const std::int32_t> step_loads() const { return step_loads_; }

 private:
  // Everything after the routing source has begun the step: the layers of `batch`, in lockstep.
  void price_step(const Batch& batch, core::Time now, int group, std::int64_t step,
                  std::span<Observer* const> observers, StepRecord& out);
  // Two-batch overlap: both halves priced by their own executors, then scheduled on two streams.
  void price_two_batches(const Batch& batch, core::Time now, int group, std::int64_t step,
                         std::span<Observer* const> observers, StepRecord& out);
  // Two-batch overlap with low-latency kernels: their send/receive kernels' time on the compute stream.
  void add_low_latency_kernels();
  // Keeps every MoE layer's per-GPU figures of the last step (a half's executor: its parent reports them).
  void keep_layers();
  double kernel(int local_gpu, const hardware::KernelWork& w);
  double all_reduce_ns(double tokens) const;
  // Local phases of one step, identical for every layer of the step.
  void price_local_phases(const Batch& batch);
  void price_experts(const policies::LayerPlacement& placement);
  // Describes the layer's dispatch: token shares per origin and token-expert pairs per destination, or
  // the per-origin pairs when the routing or the source knows them (`per_origin`), with the fan-outs.
  hardware::EpTraffic dispatch_traffic(const policies::LayerPlacement& placement, bool per_origin, int moe_layer,
                                       std::int64_t step);
  // Hands the batch's requests to the routing source; false when it is exhausted.
  bool begin_routing(const Batch& batch, const std::vector<RequestState>& requests, core::Time now);
  // One MoE layer: routing, expert phase, dispatch and combine, into `rec` and the step's totals.
  void price_moe_layer(const Batch& batch, std::int64_t total_tokens, LayerRecord& rec, StepRecord& out);
  // origin_counts_ from each GPU's share of the step's tokens (for routing that needs origins).
  void derive_origins();
  // Barrier: returns the slowest time, adds idle, adds to busy.
  double barrier(const Eigen::ArrayXd& per_gpu, double& idle_ns);

  const models::ModelSpec& model_;
  hardware::CostModel& cost_;
  hardware::CollectiveModel& collectives_;
  int gpu_offset_;
  int gpus_;
  int tp_;  // attention tensor parallelism: a DP rank spans tp_ GPUs
  hardware::Topology topo_;
  const policies::Placement& placement_;
  policies::RoutingPolicy& routing_;
  bool routing_needs_origins_;  // the policy's declaration, asked once
  workloads::RoutingSource& source_;
  double step_overhead_ns_;
  double dispatch_bytes_;  // one token on the wire, dispatch and combine (datatypes: hardware/ep_comm.hpp)
  double combine_bytes_;
  hardware::EpCommConfig comm_;
  bool step_prefills_ = true;              // the step being priced has prefill tokens
  std::optional<FanoutEstimator> fanout_;  // when the collectives deduplicate (DeepEP normal)

  // Per-GPU buffers.
  Eigen::ArrayXd tokens_, share_, attention_ns_, chunked_attention_ns_, dense_ns_, router_ns_, shared_ns_, lm_head_ns_;
  Eigen::ArrayXd elementwise_moe_ns_, elementwise_dense_ns_;       // model.elementwise_kernels: per MoE / dense layer
  Eigen::ArrayXd local_ns_, expert_ns_, busy_ns_, pairs_, quota_;  // quota_: derive_origins' workspace
  Eigen::ArrayXd gather_bytes_;                                    // all-gather: hidden-state bytes each GPU sends
  std::vector<std::int32_t> gpu_pairs_, gpu_activated_, origin_share_;
  std::vector<std::int32_t> expert_tokens_;
  std::vector<std::int32_t> step_loads_;                    // every MoE layer's expert_tokens_ of the step
  std::vector<std::pair<double, double>> compute_windows_;  // reserved once: 2 per MoE layer + the tail
  std::vector<workloads::RequestTokens> step_requests_;     // begin_step's view of the batch
  policies::RoutedLoad routed_;
  Eigen::MatrixXd traffic_matrix_;  // per-origin token-expert pairs
  // Two-batch overlap (parent): the halves' executors and batches, the schedule, per-GPU sums for observers.
  std::array<std::unique_ptr<StepExecutor>, 2> halves_;
  std::array<Batch, 2> half_batches_;
  std::array<StepRecord, 2> half_records_;
  OverlapTimeline timeline_;
  Eigen::ArrayXd sum_local_, sum_expert_;
  std::vector<std::int32_t> sum_tokens_, sum_activated_;
  // A half's executor: per MoE layer its phase times and (layer-major) per-GPU figures, and its tail.
  bool keep_layers_ = false;
  std::vector<HalfLayer> half_layers_;
  std::vector<LayerRecord> kept_records_;
  Eigen::ArrayXXd kept_local_, kept_expert_;  // gpus x MoE layers
  std::vector<std::int32_t> kept_tokens_, kept_activated_;
  double tail_ns_ = 0.0;
  std::vector<std::int32_t> origin_counts_;  // [origin][expert] from the routing source, when it has them
};

}  // namespace epsim::serving
