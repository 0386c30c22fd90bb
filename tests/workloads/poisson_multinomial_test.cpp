// SPDX-License-Identifier: Apache-2.0
#include "workloads/poisson_multinomial.hpp"

#include <algorithm>
#include <boost/math/distributions/chi_squared.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <numeric>
#include <vector>

#include "core/error.hpp"
#include "tests/support/chi_square.hpp"

using epsim::core::Isa;
namespace workloads = epsim::workloads;

TEST_CASE("the Poissonised multinomial fits the exact multinomial probabilities of every outcome") {
  // 40 picks over 3 categories: 861 outcomes, each with its exact probability; 40 > 4 x 3, so Poisson
  // rounds draw most picks and the alias table the rest.
  const std::vector<double> p{0.5, 0.3, 0.2};
  const int n = 40;
  std::vector<double> log_fact(n + 1, 0.0);
  for (int k = 1; k <= n; ++k) {
    log_fact[static_cast<std::size_t>(k)] = log_fact[static_cast<std::size_t>(k - 1)] + std::log(k);
  }
  std::map<std::pair<int, int>, double> expected_p;
  for (int a = 0; a <= n; ++a) {
    for (int b = 0; a + b <= n; ++b) {
      const int c = n - a - b;
      expected_p[{a, b}] = std::exp(log_fact[n] - log_fact[static_cast<std::size_t>(a)] -
                                    log_fact[static_cast<std::size_t>(b)] - log_fact[static_cast<std::size_t>(c)] +
                                    a * std::log(p[0]) + b * std::log(p[1]) + c * std::log(p[2]));
    }
  }
  for (const Isa isa : epsim::core::supported_isas()) {
    workloads::PoissonMultinomial sampler(isa);
    epsim::core::Rng rng(2024);
    const int draws = 100000;
    std::map<std::pair<int, int>, double> seen;
    std::vector<std::int32_t> out(3);
    for (int d = 0; d < draws; ++d) {
      sampler.draw(rng, n, p, out);
      REQUIRE(out[0] + out[1] + out[2] == n);
      seen[{out[0], out[1]}] += 1.0;
    }
    CHECK(sampler.rounds() >= draws);  // Poisson rounds did draw
    // Outcomes in order of probability, pooled into bins of >= 20 expected draws.
    std::vector<std::pair<double, std::pair<int, int>>> order;
    order.reserve(expected_p.size());
    for (const auto& [k, v] : expected_p) {
      order.emplace_back(v, k);
    }
    std::sort(order.begin(), order.end());
    std::vector<double> obs;
    std::vector<double> exp;
    double o = 0.0;
    double e = 0.0;
    for (const auto& [prob, k] : order) {
      o += seen.count(k) ? seen[k] : 0.0;
      e += prob * draws;
      if (e >= 20.0) {
        obs.push_back(o);
        exp.push_back(e);
        o = e = 0.0;
      }
    }
    obs.back() += o;
    exp.back() += e;
    const boost::math::chi_squared dist(static_cast<double>(obs.size() - 1));
    const double limit = boost::math::quantile(boost::math::complement(dist, 1e-4));
    const double x2 = epsim::test::chi_square(obs, exp);
    INFO(epsim::core::isa_name(isa) << ": chi-square " << x2 << " on " << obs.size() << " bins, limit " << limit);
    CHECK(x2 < limit);
  }
}

TEST_CASE("the Poissonised multinomial has the multinomial's means, variances and covariances") {
  // Zipf over 64 categories (unnormalised: the sampler normalises), 50,000 picks: several Poisson rounds.
  std::vector<double> p(64);
  for (std::size_t i = 0; i < p.size(); ++i) {
    p[i] = 3.0 / static_cast<double>(i + 1);
  }
  const double total = std::accumulate(p.begin(), p.end(), 0.0);
  const std::int64_t n = 50000;
  const int draws = 3000;
  workloads::PoissonMultinomial sampler;
  epsim::core::Rng rng(7);
  std::vector<std::int32_t> out(p.size());
  std::vector<double> s1(p.size(), 0.0);
  std::vector<double> s2(p.size(), 0.0);
  double s01 = 0.0;
  for (int d = 0; d < draws; ++d) {
    sampler.draw(rng, n, p, out);
    REQUIRE(std::accumulate(out.begin(), out.end(), std::int64_t{0}) == n);
    for (std::size_t i = 0; i < p.size(); ++i) {
      s1[i] += out[i];
      s2[i] += static_cast<double>(out[i]) * out[i];
    }
    s01 += static_cast<double>(out[0]) * out[1];
  }
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double q = p[i] / total;
    const double mean = s1[i] / draws;
    const double var = s2[i] / draws - mean * mean;
    const double want_var = static_cast<double>(n) * q * (1.0 - q);
    INFO("category " << i);
    CHECK(std::abs(mean - static_cast<double>(n) * q) < 4.5 * std::sqrt(want_var / draws));
    CHECK(var == Approx(want_var).epsilon(4.5 * std::sqrt(2.0 / draws)));
  }
  const double q0 = p[0] / total;
  const double q1 = p[1] / total;
  const double cov = s01 / draws - (s1[0] / draws) * (s1[1] / draws);
  // -n q0 q1; the sample covariance's standard error is about sqrt(var0 var1 / draws).
  const double want = -static_cast<double>(n) * q0 * q1;
  const double se = std::sqrt(n * q0 * (1 - q0) * n * q1 * (1 - q1) / draws);
  CHECK(std::abs(cov - want) < 4.5 * se);
  CHECK(sampler.redraws() < sampler.rounds() / 10);  // P(S > N) is about 2 %
}

TEST_CASE("the capped Poissonised draw clips like multinomial_capped, and every path draws the same") {
  // Category 0 takes ~90 % of 1,000 picks with a cap of 300: the rest goes to `order`'s earliest with room.
  const std::vector<double> p{9.0, 0.4, 0.3, 0.2, 0.1};
  const std::vector<int> order{0, 1, 2, 3, 4};
  std::vector<std::int32_t> first;
  for (const Isa isa : epsim::core::supported_isas()) {
    workloads::PoissonMultinomial uncapped(isa);
    workloads::PoissonMultinomial capped(isa);
    epsim::core::Rng a(11);
    epsim::core::Rng b(11);
    std::vector<std::int32_t> raw(p.size());
    std::vector<std::int32_t> out(p.size());
    uncapped.draw(a, 1000, p, raw);
    capped.draw_capped(b, 1000, 300, p, order, out);
    // By hand: clip every count at 300, then fill 1, 2, ... up to 300 each with the clipped picks.
    std::int64_t over = 0;
    for (std::int32_t& c : raw) {
      over += std::max(0, c - 300);
      c = std::min(c, 300);
    }
    for (std::int32_t& c : raw) {
      const std::int64_t add = std::min<std::int64_t>(300 - c, over);
      c += static_cast<std::int32_t>(add);
      over -= add;
    }
    CHECK(out == raw);
    CHECK(std::accumulate(out.begin(), out.end(), 0) == 1000);
    if (first.empty()) {
      first = out;
    }
    INFO(epsim::core::isa_name(isa));
    CHECK(out == first);
  }
}

TEST_CASE("the Poissonised multinomial refuses probabilities without a positive finite sum and bad pick counts") {
  workloads::PoissonMultinomial sampler;
  epsim::core::Rng rng(1);
  std::vector<std::int32_t> out(2);
  CHECK_THROWS_AS(sampler.draw(rng, 100, std::vector<double>{0.0, 0.0}, out), epsim::core::Error);
  CHECK_THROWS_AS(sampler.draw(rng, 100, std::vector<double>{1.0, INFINITY}, out), epsim::core::Error);
  CHECK_THROWS_AS(sampler.draw(rng, 100, std::vector<double>{1.0}, out), epsim::core::Error);
  CHECK_THROWS_AS(sampler.draw(rng, -1, std::vector<double>{1.0, 1.0}, out), epsim::core::Error);
  CHECK_THROWS_AS(sampler.draw(rng, std::int64_t{1} << 31, std::vector<double>{1.0, 1.0}, out), epsim::core::Error);
}
