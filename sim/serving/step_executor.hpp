#pragma once
// Prices one engine step of one EP group (DESIGN.md 3): every layer in lockstep. Per-GPU local work
// (attention, dense FFN, router, shared experts) accumulates until the next collective; the dispatch
// all-to-all starts when the slowest GPU is ready (barrier), expert FFNs run per GPU on the tokens the
// routing policy gave them, and the combine all-to-all starts when the slowest expert GPU is done. A
// policy that needs every token everywhere (metro) gets an all-gather dispatch instead.
// Layer timing is computed directly; buffers are allocated once, never in the step loop.
#include <Eigen/Core>
#include <span>
#include <utility>
#include <vector>

#include "hardware/all_to_all.hpp"
#include "hardware/collectives.hpp"
#include "hardware/cost_model.hpp"
#include "hardware/topology.hpp"
#include "models/model_spec.hpp"
#include "policies/placement.hpp"
#include "policies/routing_policy.hpp"
#include "sim/serving/batch.hpp"
#include "sim/serving/observer.hpp"
#include "sim/serving/request_state.hpp"
#include "workloads/routing_source.hpp"

namespace epsim::serving {

struct StepResult {
  bool routed = true;  ///< false: the routing source is exhausted (a finished, non-looping trace); no step ran
  double duration_ns = 0.0;
  double barrier_idle_ns = 0.0;  ///< GPU-ns waiting at barriers, summed over the group's GPUs
  double comm_ns = 0.0;          ///< time in dispatch + combine
  double straggler_gap_sum_ns = 0.0;
  double load_std_sum = 0.0;  ///< over MoE layers: std of the GPUs' token-expert pairs (GRACE's Fig. 5)
  double straggler_gap_max_ns = 0.0;
  int moe_layers = 0;
  double intra_bytes = 0.0;
  double inter_bytes = 0.0;
};

class StepExecutor {
 public:
  /// `gpu_offset`: the group's first GPU in the cost model; `group_topology`: the group's own layout for
  /// the port model of all-to-all; `coster`: when given, all-to-alls are costed exactly on the network
  /// graph from the full traffic matrix instead.
  StepExecutor(const models::ModelSpec& model, hardware::CostModel& cost, int gpu_offset,
               hardware::Topology group_topology, const policies::Placement& placement,
               policies::RoutingPolicy& routing, workloads::RoutingSource& source, double step_overhead_us,
               hardware::CollectiveCoster* coster = nullptr, int attention_tp = 1);

  /// Prices `batch` starting at `now`; calls observers' on_layer for every MoE layer.
  StepResult run(const Batch& batch, const std::vector<RequestState>& requests, core::Time now, int group,
                 std::int64_t step, std::span<Observer* const> observers);
  std::span<const double> gpu_busy_ns() const { return {busy_ns_.data(), static_cast<std::size_t>(busy_ns_.size())}; }
  /// The last step's compute phases (no collective under way), [start, end) ns from the step's start.
  std::span<const std::pair<double, double>> compute_windows() const { return compute_windows_; }
  /// The last step's tokens per expert, [moe layer][expert].
  std::span<const std::int32_t> step_loads() const { return step_loads_; }

 private:
  double kernel(int local_gpu, const core::KernelWork& w);
  double all_reduce_ns(double tokens) const;
  // Local phases of one step, identical for every layer of the step.
  void price_local_phases(const Batch& batch);
  void price_experts(const policies::LayerPlacement& placement);
  // Costs the dispatch from token shares per origin and token-expert pairs per destination, or from the
  // routing source's per-origin counts when `per_origin`.
  hardware::CollectiveCost dispatch_cost(const policies::LayerPlacement& placement, bool per_origin);
  // metro's dispatch: every GPU sends its tokens' hidden states to every other GPU of the group.
  hardware::CollectiveCost all_gather_cost();
  // origin_counts_ from each GPU's share of the step's tokens (for routing that needs origins).
  void derive_origins();
  // Barrier: returns the slowest time, adds idle, adds to busy.
  double barrier(const Eigen::ArrayXd& per_gpu, double& idle_ns);

  const models::ModelSpec& model_;
  hardware::CostModel& cost_;
  hardware::CollectiveCoster* coster_;
  int gpu_offset_;
  int gpus_;
  int tp_;  // attention tensor parallelism: a DP rank spans tp_ GPUs
  hardware::Topology topo_;
  const policies::Placement& placement_;
  policies::RoutingPolicy& routing_;
  workloads::RoutingSource& source_;
  double step_overhead_ns_;
  double pair_bytes_;  // dispatch payload of one token-expert pair

  // Per-GPU buffers.
  Eigen::ArrayXd tokens_, share_, attention_ns_, chunked_attention_ns_, dense_ns_, router_ns_, shared_ns_, lm_head_ns_;
  Eigen::ArrayXd local_ns_, expert_ns_, busy_ns_, pairs_, quota_;  // quota_: derive_origins' workspace
  std::vector<std::int32_t> gpu_pairs_, gpu_activated_, origin_share_;
  Eigen::ArrayXd node_pairs_, node_share_;
  Eigen::ArrayXd node_bytes_;  // all-gather: hidden-state bytes leaving each node's GPUs
  std::vector<std::int32_t> expert_tokens_;
  std::vector<std::int32_t> step_loads_;
  std::vector<std::pair<double, double>> compute_windows_;  // reserved once: 2 per MoE layer + the tail // every MoE
                                                            // layer's expert_tokens_ of the step
  std::vector<workloads::RequestTokens> step_requests_;     // begin_step's view of the batch
  policies::RoutedLoad routed_;
  hardware::PerGpuTraffic traffic_;
  Eigen::MatrixXd traffic_matrix_;           // graph mode, or per-origin counts
  std::vector<std::int32_t> origin_counts_;  // [origin][expert] from the routing source, when it has them
};

}  // namespace epsim::serving
