// SPDX-License-Identifier: Apache-2.0
#include "hardware/measured_curve.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace epsim::hardware {

MeasuredCurve::MeasuredCurve(std::vector<std::pair<double, double>> points) {
  for (const auto& [model, measured] : points) {
    if (!(model > 0.0) || !(measured > 0.0) || !std::isfinite(model) || !std::isfinite(measured)) {
      throw core::Error("MeasuredCurve: modelled and measured times must be positive");
    }
  }
  std::sort(points.begin(), points.end());
  constexpr double k_merge = 0.00995;  // log(1.01): points within 1 % of modelled time are one
  std::size_t i = 0;
  while (i < points.size()) {
    const double x0 = std::log(points[i].first);
    double sum_x = 0.0;
    double sum_r = 0.0;
    std::size_t n = 0;
    for (; i < points.size() && std::log(points[i].first) - x0 < k_merge; ++i, ++n) {
      sum_x += std::log(points[i].first);
      sum_r += std::log(points[i].second / points[i].first);
    }
    log_model_.push_back(sum_x / static_cast<double>(n));
    log_ratio_.push_back(sum_r / static_cast<double>(n));
  }
}

double MeasuredCurve::first_ns() const {
  return empty() ? 0.0 : std::exp(log_model_.front());
}

double MeasuredCurve::last_ns() const {
  return empty() ? 0.0 : std::exp(log_model_.back());
}

double MeasuredCurve::ratio(double model_ns) const {
  if (empty()) {
    return 1.0;
  }
  if (!(model_ns > 0.0)) {
    return std::exp(log_ratio_.front());
  }
  const double x = std::log(model_ns);
  if (x <= log_model_.front()) {
    return std::exp(log_ratio_.front());
  }
  if (x >= log_model_.back()) {
    return std::exp(log_ratio_.back());
  }
  const auto hi =
      static_cast<std::size_t>(std::upper_bound(log_model_.begin(), log_model_.end(), x) - log_model_.begin());
  const std::size_t lo = hi - 1;
  const double t = (x - log_model_[lo]) / (log_model_[hi] - log_model_[lo]);
  return std::exp(log_ratio_[lo] + t * (log_ratio_[hi] - log_ratio_[lo]));
}

}  // namespace epsim::hardware
