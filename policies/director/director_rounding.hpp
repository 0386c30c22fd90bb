// SPDX-License-Identifier: Apache-2.0
#pragma once
// DIRECTOR's randomised iterative rounding (paper 002, Section VI-C b, Theorem 1): from the LP's
// fractional x of a layer, a random walk in the null space of the tight constraints (assignment rows,
// tight capacity rows and the scale-preserving rows of Eq. 7) with each coordinate's step scaled by
// its scale s_v = 2^-k (min(x_v, 1 - x_v) in (2^-(k+1), 2^-k]); variables reaching 0 or 1 are clamped
// for good; macro-iterations recompute the scales and groups. Where the paper walks with a tiny fixed
// step gamma for T_micro steps, each of our micro-steps walks along the sampled direction to the first
// new tight constraint, forwards or backwards with the probabilities that make the step a martingale
// (E[x'] = x, the property Lemma 1.2's concentration rests on); so every micro-step fixes a variable or
// tightens a capacity and a layer needs at most (#variables + #GPUs) of them. When the scale rows leave
// no direction, the macro-iteration continues with the hard rows only; a vertex of the assignment +
// capacity polytope is integral (it is a transportation polytope, totally unimodular), so the walk ends
// integral and within C_max. Not from the paper: the scale bounds x_v <= alpha * s_v are not imposed
// (every micro-step already ends on a boundary), `trials` independent walks keep the lowest exact
// objective, and an optional polish applies improving single moves, pairwise swaps and exchanges of two
// GPUs' whole expert sets (the last reaches a placement's mirror, which moves and swaps cannot).
#include <span>
#include <vector>

#include "core/random_streams.hpp"
#include "policies/director/director_lp.hpp"
#include "policies/director/director_model.hpp"

namespace epsim::policies {

struct DirectorRoundingOptions {
  int trials = 4;         ///< independent walks per layer; the lowest Eq. 1-4 cost is kept
  bool polish = true;     ///< improving moves / swaps after the walk (not in the paper)
  int polish_passes = 4;  ///< sweeps over all moves and swaps at most
};

struct DirectorRoundingResult {
  std::vector<int> gpu_of;  ///< [layer][expert] -> GPU, within C_max
  DirectorCost cost;        ///< Eq. 5 of gpu_of (after polish)
  double walk_ns = 0.0;     ///< Eq. 5 of the best walks, before polish
  double gap = 0.0;         ///< cost.total_ns() / LP bound (1 when the bound is 0 and the cost too)
  double walk_gap = 0.0;    ///< walk_ns / LP bound
  long long micro_steps = 0;
  long long macro_iterations = 0;
  int repairs = 0;  ///< experts moved after the walk because numerics left a GPU over C_max (expect 0)
};

/// One walk on one layer's x[expert][gpu] (E * G values); returns expert -> GPU within `capacity`.
std::vector<int> round_layer_walk(std::span<const double> x, int experts, int gpus, int capacity, core::Rng& rng,
                                  long long* micro_steps = nullptr, long long* macro_iterations = nullptr,
                                  int* repairs = nullptr);

/// Rounds every layer of `lp` (from solve_director_lp on `p`).
DirectorRoundingResult round_director(const DirectorProblem& p, const DirectorLpResult& lp,
                                      const DirectorRoundingOptions& opt, core::Rng& rng);

}  // namespace epsim::policies
