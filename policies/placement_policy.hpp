#pragma once
// Which replicas of which experts live on which GPU, for every MoE layer. A policy sees
// plain inputs only, never the simulator, so `epsim place` can call it for a real deployment.
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "core/grid_view.hpp"
#include "policies/cost_curves.hpp"
#include "policies/placement.hpp"
#include "policies/policy_needs.hpp"

namespace epsim::policies {

struct PlacementInput {
  int num_layers = 0;     ///< MoE layers
  int num_experts = 0;    ///< logical experts per layer
  int num_gpus = 0;       ///< GPUs of the EP group
  int num_nodes = 1;      ///< nodes the EP group spans
  int slots_per_gpu = 0;  ///< physical expert slots per GPU (num_gpus * slots_per_gpu >= num_experts)
  int num_groups = 1;     ///< expert groups (DeepSeek's n_group) for group-aware policies
  /// Tokens per expert over a load window, [layer][expert] row-major (empty when not profiled).
  std::vector<double> expert_load;
  /// The same window step by step, [step][layer][expert] row-major: `window_steps` steps (GEM scores
  /// every step separately). Empty when not profiled.
  std::vector<double> window_load;
  int window_steps = 0;
  /// C_g(n, a) of every GPU of the group (null when no policy asked for them).
  std::shared_ptr<const CostCurves> curves;
  std::uint64_t seed = 0;  ///< for randomised policies (GEM's restarts, GRACE's k-means++ seeding)
  /// Co-selection counts over a profiling window, [layer][expert][expert] row-major: how many tokens
  /// chose both experts in their top-k (policies/grace/affinity.hpp). Empty when unknown; GRACE needs it.
  std::vector<double> coactivation;
  /// Per-origin workload W (DIRECTOR): tokens on GPU j routed to expert i, [layer][origin_gpu][expert]
  /// row-major, one such matrix per pass kind. Empty when unknown (DIRECTOR then spreads expert_load
  /// evenly over the origins).
  std::vector<double> origin_load;
  /// Kinds of forward pass in origin_load and how many of each (director_model.hpp); empty: one pass.
  std::vector<double> pass_weight;
  /// Link bandwidths [src_gpu][dst_gpu] in bytes per ns (= GB/s). Empty when unknown (DIRECTOR then
  /// uses its intra-/inter-node options).
  std::vector<double> link_bytes_per_ns;
  double token_bytes = 0.0;   ///< bytes of one token's hidden state on the wire (0 = the policy's own option)
  double expert_bytes = 0.0;  ///< weights of one expert copy (0 = unknown): what moving an expert costs

  /// The shape alone, no loads or curves.
  static PlacementInput shape(int layers, int experts, int gpus, int nodes, int slots_per_gpu, int groups = 1) {
    PlacementInput in;
    in.num_layers = layers;
    in.num_experts = experts;
    in.num_gpus = gpus;
    in.num_nodes = nodes;
    in.slots_per_gpu = slots_per_gpu;
    in.num_groups = groups;
    return in;
  }

  /// Tokens of expert `e` of layer `l` in window step `t`.
  double window(int t, int l, int e) const {
    return core::grid(window_load, window_steps, num_layers, num_experts)(t, l, e);
  }
};

class PlacementPolicy {
 public:
  virtual ~PlacementPolicy() = default;
  virtual Placement place(const PlacementInput& in) = 0;
  /// The inputs place() reads besides the shape (load window, cost curves, co-activation).
  virtual PolicyNeeds needs() const { return {}; }
};

}  // namespace epsim::policies
