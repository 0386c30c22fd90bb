// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which replicas of which experts live on which GPU, for every MoE layer. A policy sees
// plain inputs only, never the simulator, so `epsim place` can call it for a real deployment; the
// optional inputs are typed views (placement_inputs.hpp) read through checked accessors.
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "policies/cost_curves.hpp"
#include "policies/placement.hpp"
#include "policies/placement_inputs.hpp"
#include "policies/policy_needs.hpp"

namespace epsim::policies {

struct PlacementInput {
  int num_layers = 0;         ///< MoE layers
  int num_experts = 0;        ///< logical experts per layer
  int num_gpus = 0;           ///< GPUs of the EP group
  int num_nodes = 1;          ///< nodes the EP group spans
  int slots_per_gpu = 0;      ///< physical expert slots per GPU (num_gpus * slots_per_gpu >= num_experts)
  int num_groups = 1;         ///< expert groups (DeepSeek's n_group) for group-aware policies
  std::uint64_t seed = 0;     ///< for randomised policies (GEM's restarts, GRACE's k-means++ seeding)
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

  // The optional inputs, typed (placement_inputs.hpp). The builders fill those the policy's PolicyNeeds
  // ask for; set_* builds the view against this shape (set the shape first), so its sizes are checked
  // there once. A policy reads them through the checked accessors, which throw core::Error naming the
  // missing input and the need that supplies it: a policy never re-checks its inputs by hand.

  /// The load window (need: load_window; per step: step_window). `per_step` may be empty.
  void set_load_window(std::vector<double> total, std::vector<double> per_step = {},
                       std::vector<std::uint8_t> prefill_steps = {}) {
    load_window_.emplace(num_layers, num_experts, std::move(total), std::move(per_step), std::move(prefill_steps));
  }
  /// Cost curves of the group's GPUs (need: cost_curves); throws core::Error when null or for another
  /// number of GPUs.
  void set_cost_curves(std::shared_ptr<const CostCurves> curves);
  /// Co-selection counts [layer][expert][expert] (need: coactivation).
  void set_coactivation(std::vector<double> counts) {
    coactivation_.emplace(num_layers, num_experts, std::move(counts));
  }
  /// Cross-layer transitions [layer][expert][expert] for layers 0 .. L - 2 (need: transitions).
  void set_transitions(std::vector<double> counts) { transitions_.emplace(num_layers, num_experts, std::move(counts)); }
  /// Per-origin workload per pass kind with the passes of each (DIRECTOR's trigger; no need declares it).
  void set_origin_load(std::vector<double> load, std::vector<double> pass_weight = {}) {
    origin_load_.emplace(num_layers, num_gpus, num_experts, std::move(load), std::move(pass_weight));
  }
  /// Link bandwidths [src][dst] in bytes per ns (the builders give them with every input).
  void set_link_bandwidths(std::vector<double> bytes_per_ns) { links_.emplace(num_gpus, std::move(bytes_per_ns)); }
  /// Drops the load window (a trigger keeps the shape, not the profiled window).
  void clear_load_window() { load_window_.reset(); }

  bool has_load_window() const { return load_window_.has_value(); }
  bool has_cost_curves() const { return curves_ != nullptr; }
  bool has_coactivation() const { return coactivation_.has_value(); }
  bool has_transitions() const { return transitions_.has_value(); }
  bool has_origin_load() const { return origin_load_.has_value(); }
  bool has_link_bandwidths() const { return links_.has_value(); }

  const LoadWindow& load_window() const;
  /// The load window with its per-step matrices (need: step_window); throws when only the total is known.
  const LoadWindow& step_window() const;
  const CostCurves& cost_curves() const;
  /// The curves as shared, null when absent (for what outlives the input, e.g. the run's reports).
  const std::shared_ptr<const CostCurves>& cost_curves_ptr() const { return curves_; }
  const Coactivation& coactivation() const;
  const LayerTransitions& transitions() const;
  const OriginLoad& origin_load() const;
  const LinkBandwidths& link_bandwidths() const;

 private:
  std::optional<LoadWindow> load_window_;
  std::shared_ptr<const CostCurves> curves_;
  std::optional<Coactivation> coactivation_;
  std::optional<LayerTransitions> transitions_;
  std::optional<OriginLoad> origin_load_;
  std::optional<LinkBandwidths> links_;
};

class PlacementPolicy {
 public:
  virtual ~PlacementPolicy() = default;
  virtual Placement place(const PlacementInput& in) = 0;
  /// The inputs place() reads besides the shape (load window, cost curves, co-activation).
  virtual PolicyNeeds needs() const { return {}; }
  /// The largest EP group place() finishes in about a minute of one core (0: no bound); a config with a
  /// larger group is refused before anything is placed (docs/policies.md, Bounds).
  virtual int max_ep_size() const { return 0; }
};

}  // namespace epsim::policies
