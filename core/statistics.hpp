// SPDX-License-Identifier: Apache-2.0
#pragma once
// Summary statistics: exact (Welford mean/variance, sorted quantiles) and streaming (a log-bucketed
// histogram whose quantiles have bounded relative error and which never allocates after construction).
#include <cstdint>
#include <span>
#include <vector>

namespace epsim::core {

/// Count, mean, variance, min and max in one pass (Welford), numerically stable.
class RunningStats {
 public:
  void add(double x);
  std::uint64_t count() const { return n_; }
  double mean() const { return n_ ? mean_ : 0.0; }
  double variance() const;  ///< sample variance (n - 1); 0 for fewer than two values
  double stddev() const;
  double min() const { return n_ ? min_ : 0.0; }
  double max() const { return n_ ? max_ : 0.0; }
  double sum() const { return sum_; }

 private:
  std::uint64_t n_ = 0;
  double mean_ = 0.0;
  double m2_ = 0.0;
  double min_ = 0.0;
  double max_ = 0.0;
  double sum_ = 0.0;
};

/// Quantile q in [0, 1] of `values` by linear interpolation between closest ranks (numpy's default):
/// position q * (n - 1) in the sorted values. Sorts `values` in place. Empty input gives 0.
double quantile_inplace(std::vector<double>& values, double q);

/// Streaming quantiles for non-negative values: buckets grow geometrically by (1 + 2 * rel_error), so
/// any reported quantile is within `rel_error` of a value of the same rank. Values below `min_value`
/// share the first bucket (reported as 0 when they are all 0).
class QuantileSketch {
 public:
  explicit QuantileSketch(double rel_error = 0.005, double min_value = 1.0, double max_value = 1e15);
  void add(double x);
  std::uint64_t count() const { return count_; }
  /// Value of rank ceil(q * n) (nearest rank), within the relative error; 0 when empty.
  double quantile(double q) const;
  void merge(const QuantileSketch& other);

 private:
  std::size_t bucket_of(double x) const;
  double bucket_value(std::size_t b) const;

  double gamma_;
  double log_gamma_;
  double min_value_;
  std::uint64_t count_ = 0;
  std::uint64_t zeros_ = 0;
  std::vector<std::uint64_t> buckets_;
  // The last value added and its bucket: a step gives every request of a batch the same inter-token gap,
  // so most adds repeat the previous value and skip the logarithm (the same bucket either way).
  double last_x_ = -1.0;
  std::size_t last_bucket_ = 0;
};

}  // namespace epsim::core
