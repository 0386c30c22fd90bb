// SPDX-License-Identifier: Apache-2.0
#pragma once
// Prices one micro-batch of one EP group (docs/model.md): its layers in lockstep. Per-GPU local work
// (attention, dense FFN, router, shared experts) accumulates until the next collective; the dispatch
// all-to-all starts when the slowest GPU is ready (barrier), expert FFNs run per GPU on the tokens the
// routing policy gave them, and the combine all-to-all starts when the slowest expert GPU is done. A
// policy that needs every token everywhere (metro) gets an all-gather dispatch instead.
// How a step's micro-batches share the GPUs is its schedule's business (step_schedule.hpp), not this one's.
// Layer timing is computed directly; buffers are allocated once, never in the step loop.
#include <Eigen/Core>
#include <array>
#include <cstdint>
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
#include "sim/expert_price_cache.hpp"
#include "sim/fanout_estimator.hpp"
#include "sim/observer.hpp"
#include "workloads/routing_source.hpp"

namespace epsim::serving {

/// What a group's micro-batches are priced against (named, as a dozen positional arguments are easy to swap).
struct PricerInputs {
  const models::ModelSpec& model;
  hardware::CostModel& cost;
  int gpu_offset;               ///< the group's first GPU in the cost model
  hardware::Topology topology;  ///< the group's own layout
  const policies::Placement& placement;
  policies::RoutingPolicy& routing;
  workloads::RoutingSource& source;
  hardware::CollectiveModel& collectives;  ///< how its all-to-alls are costed
  int attention_tp;                        ///< attention tensor parallelism: a DP rank spans this many GPUs
  hardware::EpCommConfig comm;             ///< wire datatypes; DeepEP normal mode's fan-out sampling
  core::Rng fanout_rng;                    ///< draws the fan-out samples
};

/// One pricing pass: the step it belongs to and what the step as a whole decides for it.
struct MicroBatchStep {
  core::Time now = 0;
  int group = 0;
  std::int64_t step = 0;
  bool step_prefills = false;    ///< the step (not only this micro-batch) prefills: it picks DeepEP's kernels
  double exchange_factor = 1.0;  ///< dispatch and combine take this times their time alone (other work beside)
  double overhead_ns = 0.0;      ///< fixed time after the micro-batch's tail
};

class MicroBatchPricer {
 public:
  explicit MicroBatchPricer(const PricerInputs& in);

  /// Prices `batch`'s layers after the routing source has begun the step: adds its phases to `out`'s
  /// duration and totals, calls observers' on_layer for every MoE layer (offsets from the pass's start).
  void price(const Batch& batch, const MicroBatchStep& step, std::span<Observer* const> observers, StepRecord& out);
  /// The last pass's time in each GPU's own kernels.
  const Eigen::ArrayXd& busy_ns() const { return busy_ns_; }
  /// The last pass's compute phases (no collective under way), [start, end) ns from its start.
  std::span<const std::pair<double, double>> compute_windows() const { return compute_windows_; }
  /// The last pass's tokens per expert, [moe layer][expert].
  std::span<const std::int32_t> step_loads() const { return step_loads_; }
  /// The last pass's tail (LM head after the last combine, slowest GPU), ns.
  double tail_ns() const { return tail_ns_; }
  /// A pricer built from the same inputs as `first` and run after it in each step (two-batch overlap's
  /// second half) takes `first`'s fan-out samples where they are the ones it would draw (FanoutEstimator::follow).
  void follow_fanout(MicroBatchPricer& first);

 private:
  double kernel(int local_gpu, const hardware::KernelWork& w);
  double all_reduce_ns(double tokens) const;
  // Local phases of one pass, identical for every layer of it.
  void price_local_phases(const Batch& batch);
  void price_experts(const policies::LayerPlacement& placement);
  // Describes the layer's dispatch: token shares per origin and token-expert pairs per destination, or
  // the per-origin pairs when the routing or the source knows them (`per_origin`), with the fan-outs.
  hardware::EpTraffic dispatch_traffic(const policies::LayerPlacement& placement, bool per_origin, int moe_layer,
                                       std::int64_t step);
  // One MoE layer: routing, expert phase, dispatch and combine, into `rec` and the pass's totals.
  void price_moe_layer(const Batch& batch, std::int64_t total_tokens, LayerRecord& rec, StepRecord& out);
  // origin_counts_ from each GPU's share of the pass's tokens (for routing that needs origins).
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
  double dispatch_bytes_;  // one token on the wire, dispatch and combine (datatypes: hardware/ep_comm.hpp)
  double combine_bytes_;
  hardware::EpCommConfig comm_;
  bool step_prefills_ = true;              // the pass's MicroBatchStep::step_prefills
  double exchange_factor_ = 1.0;           // the pass's MicroBatchStep::exchange_factor
  std::optional<FanoutEstimator> fanout_;  // when the collectives deduplicate (DeepEP normal)
  ExpertPriceCache expert_prices_;         // the expert phase's kernel_ns, memoised per price class

  // Per-GPU buffers.
  Eigen::ArrayXd tokens_, share_, dense_ns_, router_ns_, shared_ns_, lm_head_ns_;
  std::array<Eigen::ArrayXd, models::k_layer_attentions> attention_ns_;  // per kind of layer (LayerAttention)
  std::array<bool, models::k_layer_attentions> has_kind_{};              // kinds some layer runs
  std::vector<models::LayerAttention> layer_kinds_;                      // each layer's kind
  Eigen::ArrayXd elementwise_moe_ns_, elementwise_dense_ns_;       // model.elementwise_kernels: per MoE / dense layer
  Eigen::ArrayXd local_ns_, expert_ns_, busy_ns_, pairs_, quota_;  // quota_: derive_origins' workspace
  Eigen::ArrayXd gather_bytes_;                                    // all-gather: hidden-state bytes each GPU sends
  std::vector<std::int32_t> gpu_pairs_, gpu_activated_, origin_share_;
  std::vector<hardware::MoeTileRule> tile_rules_;  // per GPU, read once a pass
  std::vector<std::int32_t> expert_tokens_;
  std::vector<std::int32_t> step_loads_;                    // every MoE layer's expert_tokens_ of the pass
  std::vector<std::pair<double, double>> compute_windows_;  // reserved once: 2 per MoE layer + the tail
  policies::RoutedLoad routed_;
  Eigen::MatrixXd traffic_matrix_;  // per-origin token-expert pairs
  double tail_ns_ = 0.0;
  std::vector<std::int32_t> origin_counts_;  // [origin][expert] from the routing source, when it has them
};

}  // namespace epsim::serving
