// SPDX-License-Identifier: Apache-2.0
#pragma once
// MoETuner's offline placement (Go and Mahajan, arXiv 2502.06643), DIRECTOR's "offline (static)
// placement ... as in [13]": from a profiled window, (1) each layer's experts are clustered into one
// cluster per GPU with balanced token load (the paper's ILP 1), then (2) the clusters of consecutive
// layers are mapped to GPUs so that the tokens whose expert in layer l and expert in layer l + 1 are on
// one GPU are as many as possible (its ILP 2, the cross-layer "token routing dependency").
//
// Where this departs from the paper, and why: Clp (the stack's solver) has no integer branch and bound, so
// ILP 1 is a longest-processing-time start refined by load-reducing swaps (balanced_clusters); ILP 2 is
// solved exactly, one consecutive layer pair at a time in layer order (an assignment LP, whose optimum is
// integral), not jointly over all layers.
#include <span>
#include <vector>

#include "policies/placement_policy.hpp"

namespace epsim::policies {

struct MoetunerOptions {
  bool cross_layer = true;  ///< step 2; off: layer l's cluster c on GPU c (the balance alone)
};

class MoetunerPlacement final : public PlacementPolicy {
 public:
  explicit MoetunerPlacement(MoetunerOptions o = {}) : o_(o) {}
  Placement place(const PlacementInput& in) override;
  PolicyNeeds needs() const override { return {.load_window = true, .transitions = o_.cross_layer}; }
  /// The assignment LP has GPUs^2 columns per layer: Qwen3-Next's 48 layers on 256 GPUs take ~23 s of one
  /// core (bench/placement_scale_bench), each doubling ~8x more.
  int max_ep_size() const override { return o_.cross_layer ? 256 : 0; }

 private:
  MoetunerOptions o_;
};

/// Step 1 for one layer: experts into clusters of the given sizes (sum = load.size()), heaviest first to
/// the lightest cluster with room (ties: lower expert, lower cluster), then while a swap of one expert of
/// the heaviest cluster with a lighter expert of another cluster lowers both below the heaviest load, the
/// best such swap. Returns each expert's cluster.
std::vector<int> balanced_clusters(std::span<const double> load, std::span<const int> sizes);

/// Step 2 for one layer pair: `affinity[g * n + c]` (n x n) is what putting cluster c on GPU g is worth;
/// returns the GPU of each cluster maximising the sum (a permutation), exactly.
std::vector<int> best_assignment(std::span<const double> affinity, int n);

}  // namespace epsim::policies
