#include "workloads/multinomial.hpp"

#include <algorithm>
#include <boost/random/binomial_distribution.hpp>

namespace epsim::workloads {

void multinomial_capped(core::Rng& rng, std::int64_t picks, std::int64_t cap, std::span<const double> p,
                        std::span<const int> order, std::span<std::int32_t> out) {
  std::fill(out.begin(), out.end(), 0);
  double tail = 0.0;
  for (const double x : p) {
    tail += x;
  }
  std::int64_t remaining = picks;
  std::int64_t overflow = 0;
  for (std::size_t r = 0; r < order.size() && remaining > 0; ++r) {
    const auto e = static_cast<std::size_t>(order[r]);
    const double q = tail > 0.0 ? std::min(p[e] / tail, 1.0) : 1.0;
    tail -= p[e];
    std::int64_t n = remaining;
    if (q < 1.0 && r + 1 < order.size()) {
      n = q > 0.0 ? boost::random::binomial_distribution<std::int64_t, double>(remaining, q)(rng) : 0;
    }
    remaining -= n;
    if (n > cap) {
      overflow += n - cap;
      n = cap;
    }
    out[e] = static_cast<std::int32_t>(n);
  }
  // Rare: place clipped picks on the earliest categories that still have room.
  for (std::size_t r = 0; overflow > 0 && r < order.size(); ++r) {
    auto& slot = out[static_cast<std::size_t>(order[r])];
    const std::int64_t add = std::min(cap - slot, overflow);
    slot = static_cast<std::int32_t>(slot + add);
    overflow -= add;
  }
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
