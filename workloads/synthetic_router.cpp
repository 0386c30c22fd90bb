#include "workloads/synthetic_router.hpp"

#include <algorithm>
#include <boost/random/binomial_distribution.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <cmath>
#include <numeric>

#include "sim/core/error.hpp"

namespace epsim::workloads {

SyntheticRouterConfig parse_synthetic_router(core::ParamTable& t) {
  SyntheticRouterConfig c;
  c.zipf_exponent =
      t.real("zipf_exponent", c.zipf_exponent, "skew of expert popularity: p ~ 1 / rank^s (0 = uniform)", {0.0, 10.0});
  return c;
}

std::vector<double> capped_zipf_probabilities(int n, double exponent, int top_k) {
  std::vector<double> w(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    w[static_cast<std::size_t>(r)] = std::pow(static_cast<double>(r + 1), -exponent);
  }
  // Water-filling: the hottest experts are pinned at the cap 1/k, the rest share the remaining mass in
  // proportion to their weights; repeat until no free expert exceeds the cap.
  const double cap = 1.0 / static_cast<double>(top_k);
  std::vector<double> p(w.size());
  std::size_t pinned = 0;
  for (;;) {
    const double free_weight = std::accumulate(w.begin() + static_cast<std::ptrdiff_t>(pinned), w.end(), 0.0);
    const double free_mass = 1.0 - cap * static_cast<double>(pinned);
    for (std::size_t i = 0; i < pinned; ++i) {
      p[i] = cap;
    }
    for (std::size_t i = pinned; i < w.size(); ++i) {
      p[i] = w[i] / free_weight * free_mass;
    }
    if (pinned == w.size() || p[pinned] <= cap * (1.0 + 1e-12)) {
      break;
    }
    ++pinned;  // weights are sorted descending, so the next one to exceed the cap is at `pinned`
  }
  return p;
}

SyntheticRouter::SyntheticRouter(const SyntheticRouterConfig& cfg, int moe_layers, int experts, int top_k,
                                 const core::RandomStreams& streams)
    : layers_(moe_layers),
      experts_(experts),
      top_k_(top_k),
      sorted_p_(capped_zipf_probabilities(experts, cfg.zipf_exponent, top_k)),
      tail_mass_(static_cast<std::size_t>(experts) + 1, 0.0),
      ranking_(static_cast<std::size_t>(moe_layers) * static_cast<std::size_t>(experts)),
      rng_(streams.stream("routing")) {
  if (top_k < 1 || top_k > experts) {
    throw core::Error("SyntheticRouter: need 1 <= top_k <= experts");
  }
  for (int r = experts - 1; r >= 0; --r) {
    tail_mass_[static_cast<std::size_t>(r)] =
        tail_mass_[static_cast<std::size_t>(r) + 1] + sorted_p_[static_cast<std::size_t>(r)];
  }
  // Each layer's hot set: a Fisher-Yates shuffle from a stream of its own, so the layout does not
  // depend on how many steps were drawn before.
  core::Rng layout = streams.stream("routing-layout");
  for (int l = 0; l < moe_layers; ++l) {
    auto first = ranking_.begin() + static_cast<std::ptrdiff_t>(l) * experts;
    std::iota(first, first + experts, 0);
    for (int i = experts - 1; i > 0; --i) {
      const int j = boost::random::uniform_int_distribution<int>(0, i)(layout);
      std::swap(first[i], first[j]);
    }
  }
}

std::span<const int> SyntheticRouter::ranking(int layer) const {
  return {ranking_.data() + static_cast<std::size_t>(layer) * static_cast<std::size_t>(experts_),
          static_cast<std::size_t>(experts_)};
}

void SyntheticRouter::sample(int layer, std::int64_t tokens, std::span<std::int32_t> out) {
  std::fill(out.begin(), out.end(), 0);
  const std::span<const int> order = ranking(layer);
  // Multinomial by conditional binomials in popularity order: stops as soon as all picks are placed,
  // so small decode batches cost O(picks), not O(experts).
  std::int64_t remaining = tokens * top_k_;
  std::int64_t overflow = 0;
  for (int r = 0; r < experts_ && remaining > 0; ++r) {
    const double q = sorted_p_[static_cast<std::size_t>(r)] / tail_mass_[static_cast<std::size_t>(r)];
    std::int64_t n = remaining;
    if (q < 1.0) {
      n = boost::random::binomial_distribution<std::int64_t, double>(remaining, std::min(q, 1.0))(rng_);
    }
    remaining -= n;
    if (n > tokens) {  // a token cannot pick an expert twice: pass the excess down the ranking
      overflow += n - tokens;
      n = tokens;
    }
    out[static_cast<std::size_t>(order[static_cast<std::size_t>(r)])] = static_cast<std::int32_t>(n);
  }
  // Rare: place clipped picks on the most popular experts that still have room.
  for (int r = 0; overflow > 0 && r < experts_; ++r) {
    auto& slot = out[static_cast<std::size_t>(order[static_cast<std::size_t>(r)])];
    const std::int64_t room = tokens - slot;
    const std::int64_t add = std::min(room, overflow);
    slot = static_cast<std::int32_t>(slot + add);
    overflow -= add;
  }
}

}  // namespace epsim::workloads
