// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <boost/random/lognormal_distribution.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "core/random_streams.hpp"
#include "core/statistics.hpp"

using namespace epsim::core;

TEST_CASE("running stats match hand-computed values") {
  RunningStats s;
  for (double x : {2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0}) {
    s.add(x);
  }
  REQUIRE(s.count() == 8);
  REQUIRE(s.mean() == Approx(5.0));
  // Sum of squared deviations = 32; sample variance = 32 / 7.
  REQUIRE(s.variance() == Approx(32.0 / 7.0));
  REQUIRE(s.min() == 2.0);
  REQUIRE(s.max() == 9.0);
  REQUIRE(s.sum() == 40.0);
}

TEST_CASE("exact quantiles interpolate linearly between closest ranks") {
  std::vector<double> v{15, 20, 35, 40, 50};
  REQUIRE(quantile_inplace(v, 0.0) == 15);
  REQUIRE(quantile_inplace(v, 1.0) == 50);
  REQUIRE(quantile_inplace(v, 0.5) == 35);
  // position 0.4 * 4 = 1.6 -> 20 + 0.6 * (35 - 20) = 29
  REQUIRE(quantile_inplace(v, 0.4) == Approx(29.0));
  std::vector<double> empty;
  REQUIRE(quantile_inplace(empty, 0.5) == 0.0);
}

TEST_CASE("sketch quantiles are within the relative error of the exact nearest-rank value") {
  Rng rng(5);
  boost::random::lognormal_distribution<double> d(10.0, 1.5);
  QuantileSketch sk(0.01, 1.0, 1e12);
  std::vector<double> values;
  for (int i = 0; i < 100000; ++i) {
    const double x = d(rng);
    values.push_back(x);
    sk.add(x);
  }
  std::sort(values.begin(), values.end());
  for (double q : {0.01, 0.1, 0.5, 0.9, 0.99, 0.999}) {
    const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(values.size())));
    const double exact = values[rank - 1];
    REQUIRE(sk.quantile(q) == Approx(exact).epsilon(0.0101));
  }
}

TEST_CASE("sketch quantiles stay exact-rank within the error when values repeat in runs") {
  // A step records one gap per request, most equal: runs of one value, with zeros between some runs.
  Rng rng(9);
  boost::random::lognormal_distribution<double> d(9.0, 1.0);
  boost::random::uniform_int_distribution<int> run_length(1, 64);
  QuantileSketch sk(0.01, 1.0, 1e12);
  std::vector<double> values;
  for (int i = 0; i < 2000; ++i) {
    const double x = d(rng);
    for (int k = run_length(rng); k > 0; --k) {
      values.push_back(x);
      sk.add(x);
    }
    if (i % 7 == 0) {
      values.push_back(0.0);
      sk.add(0.0);
    }
  }
  REQUIRE(sk.count() == values.size());
  std::sort(values.begin(), values.end());
  for (double q : {0.01, 0.1, 0.5, 0.9, 0.99}) {
    const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(values.size())));
    const double exact = values[rank - 1];
    if (exact == 0.0) {
      REQUIRE(sk.quantile(q) == 0.0);
    } else {
      REQUIRE(sk.quantile(q) == Approx(exact).epsilon(0.0101));
    }
  }
}

TEST_CASE("sketch handles zeros and merges") {
  QuantileSketch a(0.01);
  QuantileSketch b(0.01);
  for (int i = 0; i < 50; ++i) {
    a.add(0.0);
  }
  for (int i = 0; i < 50; ++i) {
    b.add(1000.0);
  }
  a.merge(b);
  REQUIRE(a.count() == 100);
  REQUIRE(a.quantile(0.5) == 0.0);
  REQUIRE(a.quantile(0.51) == Approx(1000.0).epsilon(0.01));
  QuantileSketch other(0.05);
  REQUIRE_THROWS(a.merge(other));
}
