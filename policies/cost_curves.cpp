#include "policies/cost_curves.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "sim/core/error.hpp"

namespace epsim::policies {

CostCurves::CostCurves(std::vector<std::vector<double>> tokens, std::vector<std::vector<double>> ns)
    : gpus_(static_cast<int>(tokens.size())), tokens_(std::move(tokens)), ns_(std::move(ns)) {
  if (gpus_ == 0 || ns_.size() != tokens_.size()) {
    throw core::Error(fmt::format("cost curves: {} token rows and {} latency rows; expected one of each per GPU",
                                  tokens_.size(), ns_.size()));
  }
  for (std::size_t g = 0; g < tokens_.size(); ++g) {
    const auto& t = tokens_[g];
    if (t.empty() || t.size() != ns_[g].size()) {
      throw core::Error(fmt::format("cost curve of GPU {}: {} token counts and {} latencies; expected equal, >= 1", g,
                                    t.size(), ns_[g].size()));
    }
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (!(t[i] >= 0.0) || (i > 0 && !(t[i] > t[i - 1]))) {
        throw core::Error(
            fmt::format("cost curve of GPU {}: token counts must be >= 0 and strictly ascending "
                        "(point {} is {})",
                        g, i, t[i]));
      }
      if (!(ns_[g][i] >= 0.0)) {
        throw core::Error(
            fmt::format("cost curve of GPU {}: latency at {} tokens is {}; expected >= 0", g, t[i], ns_[g][i]));
      }
    }
  }
}

CostCurves::CostCurves(int gpus, Exact f) : gpus_(gpus), exact_(std::move(f)) {
  if (gpus < 1 || !exact_) {
    throw core::Error("exact cost curves need a function and at least one GPU");
  }
  tokens_.resize(static_cast<std::size_t>(gpus));
  ns_.resize(static_cast<std::size_t>(gpus));
}

double CostCurves::ns(int gpu, double tokens) const {
  if (tokens <= 0.0) {
    return 0.0;
  }
  if (exact_) {
    return exact_(gpu, tokens);
  }
  const auto& t = tokens_[static_cast<std::size_t>(gpu)];
  const auto& v = ns_[static_cast<std::size_t>(gpu)];
  // Index of the first sample point at or above `tokens`.
  const auto hi = static_cast<std::size_t>(std::lower_bound(t.begin(), t.end(), tokens) - t.begin());
  double x0 = 0.0;
  double y0 = 0.0;
  double x1 = 0.0;
  double y1 = 0.0;
  if (hi == 0) {
    x1 = t[0];
    y1 = v[0];
    if (x1 <= 0.0) {
      return y1;
    }
  } else if (hi == t.size()) {
    if (t.size() == 1) {  // one point: proportional through the origin
      return t[0] > 0.0 ? v[0] * tokens / t[0] : v[0];
    }
    x0 = t[hi - 2];
    y0 = v[hi - 2];
    x1 = t[hi - 1];
    y1 = v[hi - 1];
  } else {
    x0 = t[hi - 1];
    y0 = v[hi - 1];
    x1 = t[hi];
    y1 = v[hi];
  }
  if (hi == t.size()) {
    // Beyond the last sample: its segment's slope, never downwards (noise can tilt the last segment).
    return y1 + std::max(0.0, (y1 - y0) / (x1 - x0)) * (tokens - x1);
  }
  return y0 + (y1 - y0) * (tokens - x0) / (x1 - x0);
}

}  // namespace epsim::policies
