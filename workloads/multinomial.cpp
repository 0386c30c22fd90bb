// SPDX-License-Identifier: Apache-2.0
#include "workloads/multinomial.hpp"

#include <algorithm>
#include <bit>
#include <boost/random/binomial_distribution.hpp>
#include <boost/random/normal_distribution.hpp>
#include <boost/random/uniform_01.hpp>
#include <boost/random/uniform_int_distribution.hpp>
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

// Rare: clipped picks go to the earliest categories of `order` that still have room.
void place_overflow(std::int64_t overflow, std::int64_t cap, std::span<const int> order, std::span<std::int32_t> out) {
  for (std::size_t r = 0; overflow > 0 && r < order.size(); ++r) {
    auto& slot = out[static_cast<std::size_t>(order[r])];
    const std::int64_t add = std::min(cap - slot, overflow);
    slot = static_cast<std::int32_t>(slot + add);
    overflow -= add;
  }
}

}  // namespace

void multinomial_capped(core::Rng& rng, std::int64_t picks, std::int64_t cap, std::span<const double> p,
                        std::span<const int> order, std::span<std::int32_t> out, bool approximate) {
  place_overflow(binomial_chain(rng, picks, cap, p, order, out, approximate), cap, order, out);
}

void multinomial_capped_unsorted(core::Rng& rng, std::int64_t picks, std::int64_t cap, std::span<const double> p,
                                 std::span<std::int32_t> out, AliasTable& alias, std::vector<int>& order) {
  std::int64_t overflow = 0;
  if (picks > 4 * static_cast<std::int64_t>(p.size())) {
    overflow = binomial_chain(rng, picks, cap, p, {}, out, false);
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
    // Most probable first, ties to the lower index (a stable sort by probability, without its buffer).
    order.resize(p.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
      order[i] = static_cast<int>(i);
    }
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      const double pa = p[static_cast<std::size_t>(a)];
      const double pb = p[static_cast<std::size_t>(b)];
      return pa > pb || (pa == pb && a < b);
    });
    place_overflow(overflow, cap, order, out);
  }
}

void AliasTable::build(std::span<const double> p) {
  const auto n = p.size();
  prob_.resize(n);
  alias_.resize(n);
  small_.clear();
  large_.clear();
  double sum = 0.0;
  for (const double x : p) {
    sum += x;
  }
  for (std::size_t i = 0; i < n; ++i) {
    prob_[i] = p[i] / sum * static_cast<double>(n);
    alias_[i] = static_cast<int>(i);
    (prob_[i] < 1.0 ? small_ : large_).push_back(static_cast<int>(i));
  }
  while (!small_.empty() && !large_.empty()) {
    const int s = small_.back();
    small_.pop_back();
    const int l = large_.back();
    alias_[static_cast<std::size_t>(s)] = l;
    prob_[static_cast<std::size_t>(l)] -= 1.0 - prob_[static_cast<std::size_t>(s)];
    if (prob_[static_cast<std::size_t>(l)] < 1.0) {
      large_.pop_back();
      small_.push_back(l);
    }
  }
  for (const int i : large_) {
    prob_[static_cast<std::size_t>(i)] = 1.0;  // rounding leftovers
  }
  for (const int i : small_) {
    prob_[static_cast<std::size_t>(i)] = 1.0;
  }
  bits_ = -1;
  if (n > 0 && (n & (n - 1)) == 0 && n <= (std::size_t{1} << 16)) {
    bits_ = std::countr_zero(n);
    const double scale = std::ldexp(1.0, 64 - bits_);  // coin values span [0, 2^(64 - bits))
    threshold_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      const double t = prob_[i] * scale;
      threshold_[i] = prob_[i] >= 1.0 || t >= 18446744073709549568.0 ? k_always : static_cast<std::uint64_t>(t);
    }
  }
}

int AliasTable::draw_general(core::Rng& rng) const {
  const auto i = boost::random::uniform_int_distribution<std::size_t>(0, prob_.size() - 1)(rng);
  return boost::random::uniform_01<double>()(rng) < prob_[i] ? static_cast<int>(i) : alias_[i];
}

void multinomial_capped(core::Rng& rng, std::int64_t picks, std::int64_t cap, std::span<const double> p,
                        std::span<const int> order, std::span<std::int32_t> out, AliasTable& alias, bool approximate) {
  if (picks > 4 * static_cast<std::int64_t>(p.size())) {
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
