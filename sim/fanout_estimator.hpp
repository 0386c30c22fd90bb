// SPDX-License-Identifier: Apache-2.0
#pragma once
// How many distinct nodes and GPUs a layer's tokens reach, per token-expert pair: the deduplication
// DeepEP's normal kernels get (hardware/deepep_collectives.hpp). The step's counts say how many pairs
// each slot receives but not how they group into tokens, so per layer a sample of tokens is drawn (the
// routing source's own token model when it has one, else workloads/token_sampler.hpp from the step's
// expert shares; the model's group limit either way) and mapped through the placement: a token whose
// experts e have a share f(e, g) of their tokens on GPU g brings m_g = sum_e f(e, g) pairs to g and
// reaches it with probability r_g = 1 - prod_e (1 - f(e, g)). Each of its pairs there carries the share
// f(e, g) / m_g of r_g; averaged over the sampled tokens holding e, that is slot (e, g)'s weight u: the
// distinct tokens one of its pairs stands for. A step's distinct tokens on GPU g are then
// sum over g's slots of (the slot's pairs this step) x u, likewise per node. Per-slot weights follow the
// step's own mix of experts (a batch of other topics loads other slots), where a ratio per GPU would
// carry the sampled step's mix along (off by a third for GRACE's grouping in tests). A layer is
// re-sampled when its placement changes and every `refresh_steps` steps (topics drift).
#include <Eigen/Core>
#include <cstdint>
#include <span>
#include <vector>

#include "core/random_streams.hpp"
#include "hardware/topology.hpp"
#include "models/model_spec.hpp"
#include "policies/placement.hpp"
#include "workloads/routing_source.hpp"
#include "workloads/token_sampler.hpp"

namespace epsim::serving {

class FanoutEstimator {
 public:
  FanoutEstimator(const models::ModelSpec& model, const hardware::Topology& group, int samples, int refresh_steps,
                  core::Rng rng);
  /// This step's fan-outs of `moe_layer` from its pairs per slot (`slot_tokens`), re-sampling when due
  /// (`expert_tokens`: the step's counts, for sources without a token model).
  void update(int moe_layer, std::int64_t step, std::span<const std::int32_t> slot_tokens,
              std::span<const std::int32_t> expert_tokens, const policies::LayerPlacement& placement,
              workloads::RoutingSource& source);
  /// Distinct tokens per pair on each GPU and each node after the last update() (1 where no pair went).
  const Eigen::ArrayXd& gpu_fanout() const { return gpu_fanout_; }
  const Eigen::ArrayXd& node_fanout() const { return node_fanout_; }

  /// Slot weights of `moe_layer` from explicit token sets (token-major, top_k each) under `placement`.
  void learn(int moe_layer, std::span<const std::int32_t> token_experts, const policies::LayerPlacement& placement);
  /// Fan-outs of `moe_layer` for a step that routes `slot_tokens` pairs per slot.
  void apply(int moe_layer, std::span<const std::int32_t> slot_tokens, const policies::LayerPlacement& placement);
  /// learn + apply with the sample's own expected pairs per slot: the fan-outs of those very tokens
  /// (tests, `epsim cost`). Exact for them: distinct tokens = sum over tokens of P(reach).
  void compute(std::span<const std::int32_t> token_experts, const policies::LayerPlacement& placement,
               Eigen::ArrayXd& gpu_out, Eigen::ArrayXd& node_out);
  /// Lets this estimator take `first`'s learned weights instead of re-sampling them, whenever it would
  /// have drawn exactly `first`'s tokens: two-batch overlap's halves start from one seed, re-sample at the
  /// same steps from the source's token model (which reads the step, not the half), so their samples match.
  /// `first` must outlive this estimator and update each layer of a step before this one does.
  void follow(FanoutEstimator& first);

 private:
  int top_k_, gpus_, gpus_per_node_, samples_, refresh_steps_;
  core::Rng rng_;
  workloads::TokenSampler sampler_;
  std::vector<std::vector<double>> gpu_weight_, node_weight_;  // per MoE layer, per slot: u
  std::vector<std::int64_t> refreshed_at_;                     // per MoE layer, -1 = never
  std::vector<std::vector<int>> placed_;                       // per MoE layer: phy2log when learned
  std::vector<double> weights_;                                // workspace: the step's expert shares
  std::vector<std::int32_t> tokens_;                           // workspace: the sample's expert ids
  std::vector<double> slot_pairs_, holders_;                   // workspaces: per slot
  std::vector<std::int32_t> expected_slots_;                   // compute(): the sample's pairs per slot
  Eigen::ArrayXd gpu_fanout_, node_fanout_, miss_gpu_, miss_node_, mult_gpu_, mult_node_;
  std::vector<int> touched_gpus_, touched_nodes_;
  // follow(): the leader records, per MoE layer, its last re-sampling from the source's token model (step,
  // generator state before and after); the follower copies the weights when its own state matches.
  FanoutEstimator* leader_ = nullptr;
  bool records_ = false;
  std::vector<std::int64_t> model_sampled_at_;  // per MoE layer, -1 = never (or not from the token model)
  std::vector<core::Rng> rng_before_, rng_after_;
};

}  // namespace epsim::serving
