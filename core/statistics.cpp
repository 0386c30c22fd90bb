// SPDX-License-Identifier: Apache-2.0
#include "core/statistics.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace epsim::core {

void RunningStats::add(double x) {
  ++n_;
  sum_ += x;
  if (n_ == 1) {
    mean_ = x;
    min_ = x;
    max_ = x;
    m2_ = 0.0;
    return;
  }
  const double delta = x - mean_;
  mean_ += delta / static_cast<double>(n_);
  m2_ += delta * (x - mean_);
  min_ = std::min(min_, x);
  max_ = std::max(max_, x);
}

double RunningStats::variance() const {
  return n_ > 1 ? m2_ / static_cast<double>(n_ - 1) : 0.0;
}
double RunningStats::stddev() const {
  return std::sqrt(variance());
}

double quantile_inplace(std::vector<double>& values, double q) {
  if (values.empty()) {
    return 0.0;
  }
  std::sort(values.begin(), values.end());
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, values.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return values[lo] + (values[hi] - values[lo]) * frac;
}

QuantileSketch::QuantileSketch(double rel_error, double min_value, double max_value)
    : gamma_((1.0 + rel_error) / (1.0 - rel_error)), log_gamma_(std::log(gamma_)), min_value_(min_value) {
  if (!(rel_error > 0.0 && rel_error < 1.0) || !(min_value > 0.0) || !(max_value > min_value)) {
    throw Error("QuantileSketch: need 0 < rel_error < 1 and 0 < min_value < max_value");
  }
  const auto n = static_cast<std::size_t>(std::ceil(std::log(max_value / min_value) / log_gamma_)) + 2;
  buckets_.assign(n, 0);
}

std::size_t QuantileSketch::bucket_of(double x) const {
  if (x <= min_value_) {
    return 0;
  }
  const auto b = static_cast<std::size_t>(std::ceil(std::log(x / min_value_) / log_gamma_));
  return std::min(b, buckets_.size() - 1);
}

double QuantileSketch::bucket_value(std::size_t b) const {
  if (b == 0) {
    return min_value_;
  }
  // Bucket b holds (min * gamma^(b-1), min * gamma^b]; this midpoint is within rel_error of both ends.
  return min_value_ * 2.0 * std::pow(gamma_, static_cast<double>(b)) / (gamma_ + 1.0);
}

void QuantileSketch::add(double x) {
  ++count_;
  if (x <= 0.0) {
    ++zeros_;
    return;
  }
  if (x != last_x_) {
    last_x_ = x;
    last_bucket_ = bucket_of(x);
  }
  ++buckets_[last_bucket_];
}

double QuantileSketch::quantile(double q) const {
  if (count_ == 0) {
    return 0.0;
  }
  const auto rank = std::max<std::uint64_t>(
      1, static_cast<std::uint64_t>(std::ceil(std::clamp(q, 0.0, 1.0) * static_cast<double>(count_))));
  if (rank <= zeros_) {
    return 0.0;
  }
  std::uint64_t seen = zeros_;
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    seen += buckets_[b];
    if (seen >= rank) {
      return bucket_value(b);
    }
  }
  return bucket_value(buckets_.size() - 1);
}

void QuantileSketch::merge(const QuantileSketch& other) {
  if (other.buckets_.size() != buckets_.size() || other.gamma_ != gamma_ || other.min_value_ != min_value_) {
    throw Error("QuantileSketch::merge: sketches have different parameters");
  }
  count_ += other.count_;
  zeros_ += other.zeros_;
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    buckets_[b] += other.buckets_[b];
  }
}

}  // namespace epsim::core
