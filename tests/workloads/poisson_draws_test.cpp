// SPDX-License-Identifier: Apache-2.0
#include "workloads/poisson_draws.hpp"

#include <algorithm>
#include <boost/math/distributions/chi_squared.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <numeric>
#include <vector>

#include "core/error.hpp"
#include "tests/support/chi_square.hpp"

using epsim::core::Isa;
namespace workloads = epsim::workloads;

namespace {

// Poisson(mean)'s probability of k, from lgamma in long double.
double poisson_pmf(double mean, int k) {
  const long double m = mean;
  return static_cast<double>(std::exp(-m + k * std::log(m) - std::lgamma(static_cast<long double>(k) + 1.0L)));
}

// Chi-square of `draws` draws of Poisson(mean) against its exact probabilities, on bins of >= 20 expected
// counts (the tails pooled); returns (statistic, upper 1e-4 critical value of its degrees of freedom).
std::pair<double, double> poisson_fit(Isa isa, double mean, int draws, std::uint64_t seed) {
  epsim::core::Rng rng(seed);
  workloads::PoissonDraws sampler;
  // Means mixed with others in one call, as the multinomial calls it: the tested lane sits among others.
  std::vector<double> means(13, mean);
  means[3] = 0.5;
  means[7] = 37.0;
  std::vector<std::int64_t> out(means.size());
  const int hi = static_cast<int>(mean + 12.0 * std::sqrt(mean) + 30.0);
  std::vector<double> seen(static_cast<std::size_t>(hi) + 1, 0.0);
  for (int d = 0; d < draws; d += 11) {
    sampler.draw(rng, means, out, isa);
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (i != 3 && i != 7) {
        seen[static_cast<std::size_t>(std::min<std::int64_t>(out[i], hi))] += 1.0;
      }
    }
  }
  const double total = std::accumulate(seen.begin(), seen.end(), 0.0);
  // Each count's probability; the last bin holds the whole upper tail.
  std::vector<double> prob(static_cast<std::size_t>(hi) + 1);
  double below = 0.0;
  for (int k = 0; k < hi; ++k) {
    prob[static_cast<std::size_t>(k)] = poisson_pmf(mean, k);
    below += prob[static_cast<std::size_t>(k)];
  }
  prob.back() = std::max(0.0, 1.0 - below);
  std::vector<double> obs;
  std::vector<double> exp;
  double o = 0.0;
  double e = 0.0;
  for (int k = 0; k <= hi; ++k) {
    o += seen[static_cast<std::size_t>(k)];
    e += total * prob[static_cast<std::size_t>(k)];
    if (e >= 20.0) {
      obs.push_back(o);
      exp.push_back(e);
      o = 0.0;
      e = 0.0;
    }
  }
  obs.back() += o;
  exp.back() += e;
  const boost::math::chi_squared dist(static_cast<double>(obs.size() - 1));
  return {epsim::test::chi_square(obs, exp), boost::math::quantile(boost::math::complement(dist, 1e-4))};
}

}  // namespace

TEST_CASE("Poisson draws fit the exact probabilities on both sides of the method switch, on every path") {
  for (const Isa isa : epsim::core::supported_isas()) {
    for (const double mean : {0.05, 0.8, 3.7, 9.999, 10.0, 10.5, 23.0, 140.0, 3000.0, 2.5e5}) {
      const auto [x2, limit] = poisson_fit(isa, mean, 110000, 17 + static_cast<std::uint64_t>(mean * 10.0));
      INFO(epsim::core::isa_name(isa) << ": mean " << mean << ", chi-square " << x2 << " against " << limit);
      CHECK(x2 < limit);
    }
  }
}

TEST_CASE("Poisson draws' mean and variance match a mean of 1e8 (Stirling's side of log k!)") {
  epsim::core::Rng rng(5);
  workloads::PoissonDraws sampler;
  const std::vector<double> means(64, 1e8);
  std::vector<std::int64_t> out(means.size());
  double s = 0.0;
  double s2 = 0.0;
  const int rounds = 400;
  for (int r = 0; r < rounds; ++r) {
    sampler.draw(rng, means, out);
    for (const std::int64_t x : out) {
      const double d = static_cast<double>(x) - 1e8;
      s += d;
      s2 += d * d;
    }
  }
  const double n = 64.0 * rounds;
  const double mean_dev = s / n;
  const double var = s2 / n - mean_dev * mean_dev;
  CHECK(std::abs(mean_dev) < 4.0 * std::sqrt(1e8 / n));  // 4 standard errors of the mean
  CHECK(var == Approx(1e8).epsilon(4.0 * std::sqrt(2.0 / n)));
}

TEST_CASE("every dispatch path returns the same counts and leaves the engine in the same state") {
  const std::vector<Isa> isas = epsim::core::supported_isas();
  epsim::core::Rng mix(99);
  for (int trial = 0; trial < 200; ++trial) {
    // Lengths that are and are not multiples of eight; means across both methods, zeros and negatives.
    const std::size_t n = 1 + static_cast<std::size_t>(mix() % 70);
    std::vector<double> means(n);
    for (double& m : means) {
      const std::uint64_t r = mix();
      m = r % 7 == 0    ? 0.0
          : r % 11 == 0 ? -1.0
                        : std::ldexp(static_cast<double>(r >> 40), -12 + static_cast<int>(r % 20));
    }
    std::vector<std::int64_t> first(n);
    epsim::core::Rng first_rng(trial);
    workloads::PoissonDraws sampler;
    sampler.draw(first_rng, means, first, Isa::baseline);
    for (const Isa isa : isas) {
      std::vector<std::int64_t> out(n);
      epsim::core::Rng rng(trial);
      sampler.draw(rng, means, out, isa);
      INFO(epsim::core::isa_name(isa) << ", trial " << trial);
      CHECK(out == first);
      CHECK(rng == first_rng);
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (means[i] <= 0.0) {
        CHECK(first[i] == 0);
      }
    }
  }
}

TEST_CASE("Poisson draws refuse means that are not finite numbers below 2^50, naming the index") {
  epsim::core::Rng rng(1);
  workloads::PoissonDraws sampler;
  std::vector<std::int64_t> out(2);
  CHECK_THROWS_WITH(sampler.draw(rng, std::vector<double>{1.0, NAN}, out), Catch::Contains("index 1"));
  CHECK_THROWS_WITH(sampler.draw(rng, std::vector<double>{0x1p51, 1.0}, out), Catch::Contains("index 0"));
  CHECK_THROWS_AS(sampler.draw(rng, std::vector<double>{1.0}, out), epsim::core::Error);
}
