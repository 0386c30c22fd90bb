// SPDX-License-Identifier: Apache-2.0
#pragma once
// ViBE (paper 001, Section 4.2.3 and Algorithms 1-2): balance predicted execution time, not tokens.
// Initial placement per layer: speeds s_g = 1 / f_g(N / E), token targets tau_g = N s_g / sum_h s_h,
// experts in descending load to the GPU farthest below its target among those with a free slot (every
// GPU holds the same number of experts). Incremental update: repeatedly swap the best pair of experts
// (by marginal latency gain through f_g) between the slowest and the fastest GPU until the slowest is
// within (1 + epsilon) of the mean or no swap helps; it moves only the swapped experts.
// Loads w_e are tokens per step (the window's mean), so f_g is evaluated where the GPUs operate.
#include <span>
#include <vector>

#include "policies/cost_curves.hpp"
#include "policies/placement_policy.hpp"

namespace epsim::policies {

/// One layer's initial ViBE placement: phy2log over gpus x slots_per_gpu (-1 = empty slot).
std::vector<int> vibe_initial_layer(std::span<const double> load, const CostCurves& curves, int gpus,
                                    int slots_per_gpu);

struct VibeIncrementalResult {
  int swaps = 0;
  double max_ns_before = 0.0;  ///< predicted max_g f_g(n_g) before and after
  double max_ns_after = 0.0;
};
/// Algorithm 2 on one layer, in place on `phy2log`; stops after `max_swaps` swaps at the latest.
VibeIncrementalResult vibe_incremental_layer(std::vector<int>& phy2log, std::span<const double> load,
                                             const CostCurves& curves, int gpus, int slots_per_gpu, double epsilon,
                                             int max_swaps);
/// Predicted per-GPU times f_g(n_g) of a layer placement under loads `load` (replicas share evenly).
std::vector<double> predicted_gpu_ns(std::span<const int> phy2log, std::span<const double> load,
                                     const CostCurves& curves, int gpus, int slots_per_gpu);

class VibePlacement final : public PlacementPolicy {
 public:
  Placement place(const PlacementInput& in) override;
  PolicyNeeds needs() const override { return {.load_window = true, .cost_curves = true}; }
};

}  // namespace epsim::policies
