// SPDX-License-Identifier: Apache-2.0
#pragma once
// DIRECTOR's LP relaxation (paper 002, Section VI-C, LP 6a-6g and Algorithm 1), solved with COIN-OR
// Clp. Fractional x[l][i][j] in [0, 1]; sum_j x = 1 per expert (6e: the paper writes >= 1, but every
// latency term is non-decreasing in x, so some optimum has equality, and equality keeps the rounding's
// polytope a transportation polytope); sum_i x <= C_max per GPU and layer (6f). The max operators are
// linearised with tau_comp and tau_comm per layer (6c, 6d); f_comp = C_g is replaced by its lower
// convex hull on [0, the layer's tokens] (exact for convex curves, a valid lower bound otherwise; exact
// cost curves are sampled at `curve_points` points first), entered as epigraph rows tau >= a*lambda+b;
// f_comm is linear (bytes / bandwidth). The constraints separate by layer except the budget row (6b),
// so "sum_l tau_l <= beta is feasible" holds iff the per-layer minima sum to at most beta: the binary
// search on beta runs per layer on the layer's budget (same search, decomposed, each with relative
// tolerance epsilon), one feasibility LP per probe, warm-started by Clp's dual simplex.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "policies/director/director_model.hpp"

namespace epsim::policies {

struct DirectorLpOptions {
  /// bisect: the paper's binary search on the latency budget over feasibility LPs; direct: one LP per
  /// layer minimising tau_comp + tau_comm (the same optimum, for cross-checks and speed).
  enum class Mode : std::uint8_t { bisect, direct };
  Mode mode = Mode::bisect;
  double epsilon = 1e-4;  ///< binary search stops when (beta_high - beta_low) <= epsilon * beta_high
  int curve_points = 32;  ///< samples of an exact cost curve before its convex hull is taken
};

struct DirectorLpResult {
  std::vector<double> x;  ///< [layer][expert][gpu]: x-bar_best, the solution at the tightest feasible budget
  /// Certified lower bound on Eq. 5 over integral placements: sum of per-layer LP minima ("direct") or
  /// of the largest infeasible budgets beta_low ("bisect"; within epsilon of the LP optimum).
  double bound_ns = 0.0;
  double budget_ns = 0.0;  ///< sum of the tightest feasible budgets beta_high (= bound_ns for "direct")
  std::vector<double> layer_bound_ns;
  int lp_solves = 0;  ///< Clp solves (feasibility probes or minimisations)
};

/// A convex piecewise-linear minorant tau >= slope * n + intercept_ns (one line per hull segment).
struct HullLine {
  double slope = 0.0;
  double intercept_ns = 0.0;
};
/// Lower convex hull of C_g(., activated) on [0, max_tokens] (through (0, 0)), as lines.
std::vector<HullLine> lower_hull_lines(const CostCurves& curves, int gpu, double max_tokens, int curve_points,
                                       double activated = std::numeric_limits<double>::infinity());

/// Solves the relaxation for every layer. Throws core::Error on malformed input or when Clp fails.
DirectorLpResult solve_director_lp(const DirectorProblem& p, const DirectorLpOptions& opt = {});

}  // namespace epsim::policies
