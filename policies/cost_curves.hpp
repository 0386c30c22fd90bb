#pragma once
// C_g(n): how long one MoE layer's expert computation takes on GPU g of the EP group for n token-expert
// pairs. Placement policies balance these times, not tokens (GEM, ViBE). A curve is either
// sampled points joined by straight lines (a profile, as GEM and ViBE measure it: possibly noisy, taken
// at one moment and stale afterwards) or an exact function supplied by the caller (the simulator's own
// cost model). Policies only ever see this class, never hardware/.
#include <functional>
#include <vector>

namespace epsim::policies {

class CostCurves {
 public:
  using Exact = std::function<double(int gpu, double tokens)>;

  /// Sampled curves: `tokens[g]` strictly ascending (first point >= 0) with `ns[g]` of equal length,
  /// at least one point per GPU. Between points: linear; below the first: linear to (0, 0); above the
  /// last: the last segment's slope continued (0 if it falls). Throws core::Error on malformed points.
  CostCurves(std::vector<std::vector<double>> tokens, std::vector<std::vector<double>> ns);
  /// Exact curves: `f(g, n)` for every n >= 0 (f(g, 0) should be 0: no tokens, no kernel).
  CostCurves(int gpus, Exact f);

  int num_gpus() const { return gpus_; }
  bool exact() const { return static_cast<bool>(exact_); }
  /// C_g(n) in nanoseconds; 0 for n <= 0.
  double ns(int gpu, double tokens) const;
  /// The sample points of GPU g (empty for exact curves).
  const std::vector<double>& sample_tokens(int gpu) const { return tokens_[static_cast<std::size_t>(gpu)]; }
  const std::vector<double>& sample_ns(int gpu) const { return ns_[static_cast<std::size_t>(gpu)]; }

 private:
  int gpus_ = 0;
  std::vector<std::vector<double>> tokens_;
  std::vector<std::vector<double>> ns_;
  Exact exact_;
};

}  // namespace epsim::policies
