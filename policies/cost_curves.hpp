// SPDX-License-Identifier: Apache-2.0
#pragma once
// C_g(n, a): how long one MoE layer's expert computation takes on GPU g of the EP group for n token-expert
// pairs spread over a activated experts. Placement policies balance these times, not tokens (GEM, ViBE,
// DIRECTOR). The grouped GEMM's time depends on both: every activated expert loads its weights and pads
// its tokens to a tile, so a GPU whose n tokens fall on 2 experts is faster than one whose n fall on 8.
//
// A curve is either sampled (a profile, as GEM and ViBE measure it: possibly noisy, taken at one moment
// and stale afterwards) or an exact function supplied by the caller (the simulator's own cost model).
// Sampled curves hold, per GPU, one row per profiled activation a (each row: tokens joined by straight
// lines), interpolated linearly in a between rows; token-only curves (one row, e.g. a CSV of measured
// latencies) ignore a. ns(g, n) without a is the top row: every expert the GPU holds activated, the
// token-only C_g(n) of the papers. Policies only ever see this class, never hardware/.
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "policies/bucket_search.hpp"

namespace epsim::policies {

class CostCurves {
 public:
  using Exact = std::function<double(int gpu, double tokens)>;
  using ExactActivated = std::function<double(int gpu, double tokens, double activated)>;

  /// One profiled activation level of one GPU: `tokens` strictly ascending (first point >= 0) with
  /// `ns` of equal length, at least one point.
  struct Row {
    double activated = std::numeric_limits<double>::infinity();
    std::vector<double> tokens;
    std::vector<double> ns;
  };

  /// Token-only sampled curves: `tokens[g]` strictly ascending with `ns[g]` of equal length, at least
  /// one point per GPU. Between points: linear; below the first: linear to (0, 0); above the last: the
  /// last segment's slope continued (0 if it falls). Throws core::Error on malformed points.
  CostCurves(std::vector<std::vector<double>> tokens, std::vector<std::vector<double>> ns);
  /// Activation-aware sampled curves: `rows[g]` one or more rows with activated >= 1, strictly ascending.
  explicit CostCurves(std::vector<std::vector<Row>> rows);
  /// Exact token-only curves: `f(g, n)` for every n >= 0 (f(g, 0) should be 0: no tokens, no kernel).
  CostCurves(int gpus, Exact f);
  /// Exact activation-aware curves: `f(g, n, a)`; ns(g, n) asks f(g, n, +inf).
  CostCurves(int gpus, ExactActivated f);

  int num_gpus() const { return gpus_; }
  bool exact() const { return static_cast<bool>(exact_); }
  /// Whether a changes the answer (exact activation-aware, or more than one row).
  bool activation_aware() const { return activation_aware_; }
  /// C_g(n) in nanoseconds with every expert of the GPU activated (the top row); 0 for n <= 0.
  double ns(int gpu, double tokens) const;
  /// C_g(n, a) in nanoseconds; a is clamped to the profiled rows (and is ignored by token-only curves).
  double ns(int gpu, double tokens, double activated) const;
  /// The sample points of GPU g's top row (empty for exact curves).
  const std::vector<double>& sample_tokens(int gpu) const { return top(gpu).tokens; }
  const std::vector<double>& sample_ns(int gpu) const { return top(gpu).ns; }
  /// The rows of GPU g (empty for exact curves).
  const std::vector<Row>& rows(int gpu) const { return rows_[static_cast<std::size_t>(gpu)]; }

 private:
  const Row& top(int gpu) const;
  double row_ns(int gpu, std::size_t row, double tokens) const;
  void index_rows();

  int gpus_ = 0;
  bool activation_aware_ = false;
  std::vector<std::vector<Row>> rows_;
  // Built once from rows_: each row's token grid and each GPU's activation levels, searched in O(1)
  // (cost lookups are most of DIRECTOR's and GEM's time; a binary search per lookup was 20-40 %).
  std::vector<std::vector<BucketSearch>> token_index_;
  std::vector<BucketSearch> activated_index_;
  ExactActivated exact_;
  Row empty_;
};

/// The chance an expert with `mean_tokens` tokens per step on average gets at least one in a step, its
/// tokens taken as Poisson (many tokens, each rarely routed to it): what a policy that only knows mean
/// loads (ViBE, DIRECTOR) counts towards a GPU's expected activated experts.
inline double activation_probability(double mean_tokens) {
  return mean_tokens > 0.0 ? -std::expm1(-mean_tokens) : 0.0;
}

}  // namespace epsim::policies
