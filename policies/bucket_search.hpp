// SPDX-License-Identifier: Apache-2.0
#pragma once
// std::lower_bound / std::upper_bound over a fixed ascending list in O(1) on the lists the policies
// search on every cost lookup (cost curves' token grids: dense at tile boundaries, sparse above, and
// their activation levels). Uniform buckets over [first, last] each know the first index whose value
// falls in a later bucket; a query scans only its own bucket. The bucket of a value is a monotone
// function of it, applied alike to the list and to the query, so the index found is exactly the
// binary search's, whatever the spacing (ties, huge ranges, points at 0): the bucket only narrows the range.
#include <cstddef>
#include <span>
#include <vector>

namespace epsim::policies {

class BucketSearch {
 public:
  BucketSearch() = default;
  /// `values`: finite and non-decreasing (the caller checks; the index is only a shortcut).
  explicit BucketSearch(std::span<const double> values);

  /// The index std::lower_bound gives: the first value >= x (size() when none; 0 for a NaN x).
  std::size_t lower_bound(double x) const;
  /// The index std::upper_bound gives: the first value > x (size() when none, or for a NaN x).
  std::size_t upper_bound(double x) const;
  std::size_t size() const { return values_.size(); }
  const std::vector<double>& values() const { return values_; }

 private:
  std::size_t bucket(double x) const;
  // The first index in [from, to) whose value is not below x (strict: not at or below x).
  std::size_t scan(std::size_t from, std::size_t to, double x, bool strict) const;

  std::vector<double> values_;
  std::vector<std::size_t> start_;  // start_[b]: how many values fall in buckets before b; start_[B] = size
  double first_ = 0.0;
  double per_unit_ = 0.0;  // buckets per unit of value
  std::size_t last_bucket_ = 0;
};

}  // namespace epsim::policies
