// SPDX-License-Identifier: Apache-2.0
#include "workloads/poisson_multinomial.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "workloads/multinomial.hpp"

namespace epsim::workloads {

void PoissonMultinomial::draw(core::Rng& rng, std::int64_t picks, std::span<const double> p,
                              std::span<std::int32_t> out) {
  if (out.size() != p.size()) {
    throw core::Error(fmt::format("poisson multinomial: {} probabilities but {} outputs", p.size(), out.size()));
  }
  if (picks < 0 || picks > std::numeric_limits<std::int32_t>::max()) {
    throw core::Error(fmt::format("poisson multinomial: {} picks, expected 0 to 2^31 - 1", picks));
  }
  double total = 0.0;
  for (const double x : p) {
    total += x;
  }
  if (!(total > 0.0) || !std::isfinite(total)) {
    throw core::Error(
        fmt::format("poisson multinomial: expected probabilities with a positive finite sum, got {}", total));
  }
  std::fill(out.begin(), out.end(), 0);
  mean_.resize(p.size());
  counts_.resize(p.size());
  std::int64_t left = picks;
  while (is_large_draw(left, p.size())) {
    const double m = static_cast<double>(left) - 2.0 * std::sqrt(static_cast<double>(left));
    for (std::size_t i = 0; i < p.size(); ++i) {
      mean_[i] = m * (p[i] / total);
    }
    std::int64_t sum = 0;
    for (;;) {
      draws_.draw(rng, mean_, counts_, isa_);
      ++rounds_;
      sum = 0;
      for (const std::int64_t c : counts_) {
        sum += c;
      }
      if (sum <= left) {
        break;
      }
      ++redraws_;
    }
    for (std::size_t i = 0; i < p.size(); ++i) {
      out[i] += static_cast<std::int32_t>(counts_[i]);
    }
    left -= sum;
  }
  if (left > 0) {
    alias_.build(p);
    for (std::int64_t i = 0; i < left; ++i) {
      ++out[static_cast<std::size_t>(alias_.draw(rng))];
    }
  }
}

void PoissonMultinomial::draw_capped(core::Rng& rng, std::int64_t picks, std::int64_t cap, std::span<const double> p,
                                     std::span<const int> order, std::span<std::int32_t> out) {
  draw(rng, picks, p, out);
  place_overflow(clip_at_cap(out, cap), cap, order, out);
}

}  // namespace epsim::workloads
