// SPDX-License-Identifier: Apache-2.0
#pragma once
// GEM (GPU-variability-aware Expert Mapping, paper 000, Section 3.3.3 and Appendix B): per MoE layer,
// the score of a mapping M over a window of steps is S(M) = sum_t max_g C_g(n_g(M, t)) (Equation 1);
// an initial mapping places experts heaviest first on the GPU that minimises S of the partial mapping
// (Algorithm 2), refinement commits the best cross-GPU swap until the relative gain falls below 0.1 %
// (Algorithm 3), and K restarts, all but the first with utilisations perturbed by 20 % noise, keep the
// lowest score (Algorithm 4). Every GPU holds the same number of experts (its slots; free slots are
// empty experts that swaps can move into). GEM places each expert once: redundant slots stay empty.
#include <span>
#include <vector>

#include "core/random_streams.hpp"
#include "policies/cost_curves.hpp"
#include "policies/gem/gem_cost_table.hpp"
#include "policies/placement_policy.hpp"

namespace epsim::policies {

struct GemOptions {
  int restarts = 30;        ///< K
  double noise = 0.2;       ///< relative utilisation noise of restarts after the first
  double min_gain = 0.001;  ///< refinement stops once the committed swap gained less than this fraction
  int window_steps = 16;    ///< steps of the load window that are scored
};

/// One layer's problem: `loads[t * experts + e]` tokens of expert e in step t.
struct GemLayerProblem {
  int steps = 0;
  int experts = 0;
  int gpus = 0;
  int slots_per_gpu = 0;
  std::span<const double> loads;
  const CostCurves* curves = nullptr;
};

struct GemLayerResult {
  std::vector<int> phy2log;  ///< gpu-major slots, -1 = empty; each GPU's experts ascending, empties last
  double score_ns = 0.0;     ///< S of the returned mapping
  int restart = 0;           ///< which restart found it
  int swaps = 0;             ///< swaps that restart's refinement committed
};

/// The largest EP group GEM places in about a minute of one core with these options: its work grows
/// with restarts x window steps x GPUs^2 (the refinement's GPU pairs), and the defaults (30 x 16) reach
/// a minute near k_gem_max_ep_size GPUs (docs/policies.md, Bounds); more restarts or steps lower it.
inline constexpr int k_gem_max_ep_size = 256;
int gem_max_ep_size(const GemOptions& opt);

/// Equation 1 for a mapping given as phy2log (the reference definition, evaluated from scratch).
double gem_score(const GemLayerProblem& p, std::span<const int> phy2log);
/// The cost table a layer problem needs (activation levels 0..experts per GPU for aware curves).
GemCostTable gem_cost_table(const GemLayerProblem& p);
/// Algorithms 2-4 on one layer, with incremental score updates; `rng` draws the restarts' noise.
/// `table`, when given and built by gem_cost_table for the same curves and shape, is shared across
/// calls (layers) and grown as needed; the result does not depend on it.
GemLayerResult gem_place_layer(const GemLayerProblem& p, const GemOptions& opt, core::Rng& rng,
                               GemCostTable* table = nullptr);

class GemPlacement final : public PlacementPolicy {
 public:
  explicit GemPlacement(GemOptions opt) : opt_(opt) {}
  Placement place(const PlacementInput& in) override;
  PolicyNeeds needs() const override { return {.load_window = true, .step_window = true, .cost_curves = true}; }
  int max_ep_size() const override { return gem_max_ep_size(opt_); }

 private:
  GemOptions opt_;
};

}  // namespace epsim::policies
