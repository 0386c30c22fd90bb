#pragma once
// How many distinct nodes and GPUs a layer's tokens reach, per token-expert pair: the deduplication
// DeepEP's normal kernels get (hardware/deepep_collectives.hpp). The step's counts say how many pairs
// each GPU receives but not how they group into tokens, so per layer a sample of tokens is drawn
// (workloads/token_sampler.hpp: the step's expert shares, the model's group limit) and mapped through
// the placement: a token whose experts e have a share f(e, g) of their tokens on GPU g reaches g with
// probability 1 - prod_e (1 - f(e, g)) and brings sum_e f(e, g) pairs; the ratio of the two summed over
// the sample is the GPU's fan-out, likewise per node. A layer is re-sampled whenever its placement
// changes, its step's expert shares have moved more than `drift` (L1) from the sampled step's (a batch
// of other topics groups its experts differently: stale ratios were off by a third in tests), or every
// `refresh_steps` steps; between, its ratios apply to each step's actual pair counts. Small steps are
// sampled with at most twice their tokens.
#include <Eigen/Core>
#include <cstdint>
#include <span>
#include <vector>

#include "hardware/topology.hpp"
#include "models/model_spec.hpp"
#include "policies/placement.hpp"
#include "sim/core/random_streams.hpp"
#include "workloads/routing_source.hpp"
#include "workloads/token_sampler.hpp"

namespace epsim::serving {

class FanoutEstimator {
 public:
  FanoutEstimator(const models::ModelSpec& model, const hardware::Topology& group, int samples, int refresh_steps,
                  double drift, core::Rng rng);
  /// The fan-outs of `moe_layer` for this step, refreshed when due: tokens from the routing source's own
  /// per-token model when it has one (topics: experts chosen together come together), else drawn from
  /// the step's counts `expert_tokens`.
  void update(int moe_layer, std::int64_t step, std::span<const std::int32_t> expert_tokens,
              const policies::LayerPlacement& placement, workloads::RoutingSource& source);
  const Eigen::ArrayXd& gpu_fanout(int moe_layer) const { return gpu_[static_cast<std::size_t>(moe_layer)]; }
  const Eigen::ArrayXd& node_fanout(int moe_layer) const { return node_[static_cast<std::size_t>(moe_layer)]; }

  /// The fan-outs of explicit token sets (token-major, top_k each) under `placement`, as update() computes
  /// them from its sample: exposed for tests and for traces that carry every token's experts.
  void compute(std::span<const std::int32_t> token_experts, const policies::LayerPlacement& placement,
               Eigen::ArrayXd& gpu_out, Eigen::ArrayXd& node_out);

 private:
  int top_k_, gpus_, gpus_per_node_, samples_, refresh_steps_;
  double drift_;
  core::Rng rng_;
  workloads::TokenSampler sampler_;
  std::vector<Eigen::ArrayXd> gpu_, node_;       // per MoE layer
  std::vector<std::int64_t> refreshed_at_;       // per MoE layer, -1 = never
  std::vector<std::vector<int>> placed_;         // per MoE layer: phy2log when last computed
  std::vector<std::vector<double>> shares_;      // per MoE layer: expert shares when last sampled
  std::vector<double> weights_;                  // workspace: the step's expert shares
  std::vector<std::int32_t> tokens_;             // workspace: the sample's expert ids
  Eigen::ArrayXd miss_gpu_, pairs_gpu_, reach_gpu_, miss_node_, pairs_node_, reach_node_;  // workspaces
  std::vector<int> touched_gpus_, touched_nodes_;
};

}  // namespace epsim::serving
