// SPDX-License-Identifier: Apache-2.0
#pragma once
// How many of a verify step's k draft tokens the target model accepts (speculative decoding). Two
// published forms: per-position conditional rates (position i is accepted with p_i only if 1..i-1
// were: P(A >= i) = p_1 ... p_i, E[A] = sum_i p_1 ... p_i), or a measured acceptance-length
// distribution P(A = a), a = 0..k. Either becomes the distribution of A; draws invert its CDF with one
// Boost.Random uniform, so the same stream gives the same acceptances.
#include <span>
#include <vector>

#include "core/random_streams.hpp"

namespace epsim::serving {

class AcceptanceModel {
 public:
  AcceptanceModel() = default;
  /// Per-position conditional rates p_1..p_k, each in [0, 1].
  static AcceptanceModel from_rates(std::span<const double> rates);
  /// P(A = 0), ..., P(A = k): non-negative, summing to 1 (within 1e-6; normalised).
  static AcceptanceModel from_lengths(std::span<const double> probabilities);

  /// k, the draft tokens it describes.
  int draft_tokens() const { return static_cast<int>(probability_.size()) - 1; }
  /// P(A = a).
  double probability(int a) const { return probability_[static_cast<std::size_t>(a)]; }
  /// E[A], accepted draft tokens per verify.
  double mean_accepted() const;
  /// One draw of A, capped at `cap` (the drafts that were proposed, when fewer than k fit the output).
  int draw(core::Rng& rng, int cap) const;

 private:
  explicit AcceptanceModel(std::vector<double> probability);
  std::vector<double> probability_;  // P(A = a)
  std::vector<double> cdf_;          // P(A <= a); the last is 1
};

}  // namespace epsim::serving
