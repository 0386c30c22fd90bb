// SPDX-License-Identifier: Apache-2.0
#include "policies/bucket_search.hpp"

#include <algorithm>
#include <cmath>

namespace epsim::policies {

namespace {

// Buckets per value: enough that a grid with a few spacings (dense, then sparse) has about one value per
// bucket where it is dense; a bucket that still holds many is searched by halving.
constexpr std::size_t k_buckets_per_value = 4;
// Above this many values in one bucket, halving beats a scan.
constexpr std::size_t k_max_scan = 8;

}  // namespace

BucketSearch::BucketSearch(std::span<const double> values) : values_(values.begin(), values.end()) {
  if (values_.empty()) {
    start_.assign(1, 0);
    return;
  }
  first_ = values_.front();
  const std::size_t buckets = k_buckets_per_value * values_.size();
  last_bucket_ = buckets - 1;
  const double range = values_.back() - first_;
  // A zero range leaves every value in bucket 0; an infinite one (values near +-DBL_MAX) makes
  // per_unit_ 0, the same. Either only costs speed.
  per_unit_ = range > 0.0 && std::isfinite(range) ? static_cast<double>(buckets) / range : 0.0;
  start_.assign(buckets + 1, values_.size());
  std::size_t i = 0;
  for (std::size_t b = 0; b <= buckets; ++b) {
    while (i < values_.size() && bucket(values_[i]) < b) {
      ++i;
    }
    start_[b] = i;
  }
}

// Monotone non-decreasing in x (a subtraction, a product by a positive constant and a truncation each
// keep order under rounding), so a value in an earlier bucket than x is below x and one in a later
// bucket is above it. Only called with x in [first, last].
std::size_t BucketSearch::bucket(double x) const {
  // per_unit_ == 0 (zero or infinite range) must short-circuit: x - first_ can itself overflow to
  // infinity there, and infinity times zero is NaN, whose conversion to an integer is undefined.
  if (!(x > first_) || per_unit_ == 0.0) {
    return 0;
  }
  const double b = (x - first_) * per_unit_;
  return b >= static_cast<double>(last_bucket_) ? last_bucket_ : static_cast<std::size_t>(b);
}

std::size_t BucketSearch::scan(std::size_t from, std::size_t to, double x, bool strict) const {
  const auto below = [&](double v) { return strict ? v <= x : v < x; };
  if (to - from > k_max_scan) {
    const auto b = values_.begin();
    return static_cast<std::size_t>(
        (strict ? std::upper_bound(b + static_cast<std::ptrdiff_t>(from), b + static_cast<std::ptrdiff_t>(to), x)
                : std::lower_bound(b + static_cast<std::ptrdiff_t>(from), b + static_cast<std::ptrdiff_t>(to), x)) -
        b);
  }
  while (from < to && below(values_[from])) {
    ++from;
  }
  return from;
}

std::size_t BucketSearch::lower_bound(double x) const {
  if (values_.empty() || !(x > first_)) {
    return 0;  // also NaN: no value compares below it
  }
  if (x > values_.back()) {
    return values_.size();
  }
  const std::size_t b = bucket(x);
  return scan(start_[b], start_[b + 1], x, false);
}

std::size_t BucketSearch::upper_bound(double x) const {
  if (values_.empty() || !(x < values_.back())) {
    return values_.size();  // also NaN: no value compares above it
  }
  if (x < first_) {
    return 0;
  }
  const std::size_t b = bucket(x);
  return scan(start_[b], start_[b + 1], x, true);
}

}  // namespace epsim::policies
