// SPDX-License-Identifier: Apache-2.0
#include "workloads/multinomial.hpp"

#include <algorithm>
#include <boost/random/binomial_distribution.hpp>
#include <boost/random/normal_distribution.hpp>
#include <cmath>

namespace epsim::workloads {

namespace {

// Conditional binomials over the categories in `order` (every index in turn when it is empty): the
// multinomial's counts, each clipped at `cap`; returns the picks clipped off.
std::int64_t binomial_chain(core::Rng& rng, std::int64_t picks, std::int64_t cap, std::span<const double> p,
                            std::span<const int> order, std::span<std::int32_t> out, bool approximate) {
  boost::random::normal_distribution<double> n01;
  std::fill(out.begin(), out.end(), 0);
  double tail = 0.0;
  for (const double x : p) {
    tail += x;
  }
  const std::size_t n_cat = order.empty() ? p.size() : order.size();
  std::int64_t remaining = picks;
  std::int64_t overflow = 0;
  for (std::size_t r = 0; r < n_cat && remaining > 0; ++r) {
    const auto e = order.empty() ? r : static_cast<std::size_t>(order[r]);
    const double q = tail > 0.0 ? std::min(p[e] / tail, 1.0) : 1.0;
    tail -= p[e];
    std::int64_t n = remaining;
    if (q < 1.0 && r + 1 < n_cat) {
      const double mean = static_cast<double>(remaining) * q;
      const double var = mean * (1.0 - q);
      if (approximate && var >= 25.0) {
        n = std::clamp(static_cast<std::int64_t>(std::llround(mean + std::sqrt(var) * n01(rng))), std::int64_t{0},
                       remaining);
      } else {
        n = q > 0.0 ? boost::random::binomial_distribution<std::int64_t, double>(remaining, q)(rng) : 0;
      }
    }
    remaining -= n;
    if (n > cap) {
      overflow += n - cap;
      n = cap;
    }
    out[e] = static_cast<std::int32_t>(n);
  }
  return overflow;
}

}  // namespace

void place_overflow(std::int64_t overflow, std::int64_t cap, std::span<const int> order, std::span<std::int32_t> out) {
  for (std::size_t r = 0; overflow > 0 && r < order.size(); ++r) {
    auto& slot = out[static_cast<std::size_t>(order[r])];
    const std::int64_t add = std::min(cap - slot, overflow);
    slot = static_cast<std::int32_t>(slot + add);
    overflow -= add;
  }
}

void multinomial_capped(core::Rng& rng, std::int64_t picks, std::int64_t cap, std::span<const double> p,
                        std::span<const int> order, std::span<std::int32_t> out, bool approximate) {
  place_overflow(binomial_chain(rng, picks, cap, p, order, out, approximate), cap, order, out);
}

void multinomial_capped_unsorted(core::Rng& rng, std::int64_t picks, std::int64_t cap, std::span<const double> p,
                                 std::span<std::int32_t> out, AliasTable& alias, std::vector<int>& order,
                                 bool approximate) {
  std::int64_t overflow = 0;
  if (is_large_draw(picks, p.size())) {
    overflow = binomial_chain(rng, picks, cap, p, {}, out, approximate);
  } else {
    alias.build(p);
    std::fill(out.begin(), out.end(), 0);
    for (std::int64_t i = 0; i < picks; ++i) {
      std::int32_t& c = out[static_cast<std::size_t>(alias.draw(rng))];
      if (c < cap) {
        ++c;
      } else {
        ++overflow;
      }
    }
  }
  if (overflow > 0) {
    sort_by_probability(p, order);
    place_overflow(overflow, cap, order, out);
  }
}

void sort_by_probability(std::span<const double> p, std::vector<int>& order) {
  // A stable sort by probability, without its buffer.
  order.resize(p.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    order[i] = static_cast<int>(i);
  }
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    const double pa = p[static_cast<std::size_t>(a)];
    const double pb = p[static_cast<std::size_t>(b)];
    return pa > pb || (pa == pb && a < b);
  });
}

std::int64_t clip_at_cap(std::span<std::int32_t> out, std::int64_t cap) {
  std::int64_t overflow = 0;
  for (std::int32_t& c : out) {
    if (c > cap) {
      overflow += c - cap;
      c = static_cast<std::int32_t>(cap);
    }
  }
  return overflow;
}

void multinomial_capped(core::Rng& rng, std::int64_t picks, std::int64_t cap, std::span<const double> p,
                        std::span<const int> order, std::span<std::int32_t> out, AliasTable& alias, bool approximate) {
  if (is_large_draw(picks, p.size())) {
    multinomial_capped(rng, picks, cap, p, order, out, approximate);
    return;
  }
  alias.build(p);
  tally_capped(picks, cap, order, out, [&] { return alias.draw(rng); });
}

void water_fill_cap(std::span<double> p, double cap) {
  for (int iter = 0; iter < 64; ++iter) {
    double excess = 0.0;
    double free_mass = 0.0;
    for (const double x : p) {
      if (x > cap) {
        excess += x - cap;
      } else if (x < cap) {
        free_mass += x;
      }
    }
    if (excess <= 1e-15 || free_mass <= 0.0) {
      return;
    }
    const double scale = 1.0 + excess / free_mass;
    for (double& x : p) {
      x = x >= cap ? cap : x * scale;
    }
  }
}

}  // namespace epsim::workloads
