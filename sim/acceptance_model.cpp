// SPDX-License-Identifier: Apache-2.0
#include "sim/acceptance_model.hpp"

#include <boost/random/uniform_01.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace epsim::serving {

AcceptanceModel::AcceptanceModel(std::vector<double> probability) : probability_(std::move(probability)) {
  double sum = 0.0;
  for (const double p : probability_) {
    sum += p;
    cdf_.push_back(sum);
  }
  cdf_.back() = 1.0;  // rounding never leaves a draw past the last length
}

AcceptanceModel AcceptanceModel::from_rates(std::span<const double> rates) {
  if (rates.empty()) {
    throw std::invalid_argument("AcceptanceModel: at least one draft position");
  }
  // P(A >= i) = p_1 ... p_i; P(A = a) = P(A >= a) - P(A >= a + 1).
  std::vector<double> at_least(rates.size() + 2, 0.0);
  at_least[0] = 1.0;
  for (std::size_t i = 0; i < rates.size(); ++i) {
    if (!(rates[i] >= 0.0 && rates[i] <= 1.0)) {
      throw std::invalid_argument("AcceptanceModel: a rate outside [0, 1]");
    }
    at_least[i + 1] = at_least[i] * rates[i];
  }
  std::vector<double> p(rates.size() + 1);
  for (std::size_t a = 0; a < p.size(); ++a) {
    p[a] = at_least[a] - at_least[a + 1];
  }
  return AcceptanceModel(std::move(p));
}

AcceptanceModel AcceptanceModel::from_lengths(std::span<const double> probabilities) {
  if (probabilities.size() < 2) {
    throw std::invalid_argument("AcceptanceModel: P(A = 0) and at least P(A = 1)");
  }
  double sum = 0.0;
  for (const double p : probabilities) {
    if (!(p >= 0.0 && std::isfinite(p))) {
      throw std::invalid_argument("AcceptanceModel: a negative probability");
    }
    sum += p;
  }
  if (std::abs(sum - 1.0) > 1e-6) {
    throw std::invalid_argument("AcceptanceModel: probabilities must sum to 1");
  }
  std::vector<double> p(probabilities.begin(), probabilities.end());
  for (double& x : p) {
    x /= sum;
  }
  return AcceptanceModel(std::move(p));
}

double AcceptanceModel::mean_accepted() const {
  double mean = 0.0;
  for (std::size_t a = 1; a < probability_.size(); ++a) {
    mean += static_cast<double>(a) * probability_[a];
  }
  return mean;
}

int AcceptanceModel::draw(core::Rng& rng, int cap) const {
  const double u = boost::random::uniform_01<double>()(rng);
  // The first length whose CDF exceeds u.
  const auto it = std::upper_bound(cdf_.begin(), cdf_.end(), u);
  const auto a = static_cast<int>(std::min<std::ptrdiff_t>(it - cdf_.begin(), draft_tokens()));
  return std::min(a, cap);
}

}  // namespace epsim::serving
