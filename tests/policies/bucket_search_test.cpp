// SPDX-License-Identifier: Apache-2.0
// BucketSearch finds exactly the index std::lower_bound / std::upper_bound find, on random grids and on
// the ones that break bucket schemes: ties, a grid dense at one end and sparse at the other, ranges up
// to the whole double line, points at (signed) zero, one point, none; queries at, between and just
// beside every point, outside the range, infinite and NaN.
#include <algorithm>
#include <boost/random/uniform_int_distribution.hpp>
#include <boost/random/uniform_real_distribution.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "core/random_streams.hpp"
#include "policies/bucket_search.hpp"

using epsim::policies::BucketSearch;

namespace {

constexpr double k_inf = std::numeric_limits<double>::infinity();
constexpr double k_max = std::numeric_limits<double>::max();

// Every query worth asking of `v`: each point, its neighbours in the double line, midpoints, the ends.
std::vector<double> queries(const std::vector<double>& v) {
  std::vector<double> q{-k_inf, k_inf, std::numeric_limits<double>::quiet_NaN(), 0.0, -0.0, -k_max, k_max};
  for (std::size_t i = 0; i < v.size(); ++i) {
    q.push_back(v[i]);
    q.push_back(std::nextafter(v[i], -k_inf));
    q.push_back(std::nextafter(v[i], k_inf));
    if (i > 0) {
      q.push_back(v[i - 1] + (v[i] - v[i - 1]) / 2.0);
      q.push_back(v[i - 1] + (v[i] - v[i - 1]) / 3.0);
    }
  }
  return q;
}

// The number of disagreements with the binary search over every query of `v`.
int mismatches(const std::vector<double>& v) {
  const BucketSearch s(v);
  int bad = 0;
  for (const double x : queries(v)) {
    const auto lo = static_cast<std::size_t>(std::lower_bound(v.begin(), v.end(), x) - v.begin());
    const auto hi = static_cast<std::size_t>(std::upper_bound(v.begin(), v.end(), x) - v.begin());
    if (s.lower_bound(x) != lo || s.upper_bound(x) != hi) {
      UNSCOPED_INFO("x = " << x << ": lower " << s.lower_bound(x) << " vs " << lo << ", upper " << s.upper_bound(x)
                           << " vs " << hi);
      ++bad;
    }
  }
  return bad;
}

}  // namespace

TEST_CASE("bucket search equals the binary search on adversarial grids") {
  // A cost profile's grid: 1, 2, 4 .. cap, cap + 1, both edges of every tile boundary, then sparse.
  std::vector<double> profile{1, 2, 4, 8, 9};
  for (double n = 512; n <= 8192; n += 512) {
    profile.push_back(n);
    profile.push_back(n + 8);
  }
  for (double n = 8192 + 2048; n <= 65536; n += 2048) {
    profile.push_back(n);
  }
  std::vector<double> uniform;
  for (int i = 0; i <= 200; ++i) {
    uniform.push_back(3.0 * i);
  }
  std::vector<double> clustered;  // all but one point in the first of thousands of buckets
  for (int i = 0; i < 100; ++i) {
    clustered.push_back(i * 1e-300);
  }
  clustered.push_back(1e300);
  const std::vector<std::vector<double>> grids{
      {},
      {0.0},
      {5.0},
      {0.0, 0.0},
      {-0.0, 0.0},
      {0.0, 0.0, 1.0},
      {1.0, 1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 3.0},
      {0.0, 1e300, k_max},
      {-k_max, 0.0, k_max},  // the range overflows to infinity
      {-k_max, -k_max, k_max, k_max},
      {1.0, std::nextafter(1.0, 2.0), std::nextafter(std::nextafter(1.0, 2.0), 2.0)},
      {0.1, 0.2, 0.30000000000000004, 0.4},
      profile,
      uniform,
      clustered,
  };
  for (const auto& g : grids) {
    CAPTURE(g);
    REQUIRE(mismatches(g) == 0);
  }
}

TEST_CASE("bucket search equals the binary search on random grids") {
  epsim::core::Rng rng = epsim::core::RandomStreams(40).stream("bucket_search_test", 0);
  boost::random::uniform_int_distribution<int> size(1, 300);
  boost::random::uniform_int_distribution<int> kind(0, 3);
  boost::random::uniform_real_distribution<double> unit(0.0, 1.0);
  boost::random::uniform_real_distribution<double> exponent(-300.0, 300.0);
  for (int trial = 0; trial < 400; ++trial) {
    std::vector<double> v(static_cast<std::size_t>(size(rng)));
    const int k = kind(rng);
    for (double& x : v) {
      switch (k) {
        case 0:  // uniform in [0, 1000)
          x = 1000.0 * unit(rng);
          break;
        case 1:  // whole numbers with many ties
          x = std::floor(20.0 * unit(rng));
          break;
        case 2:  // log-uniform over most of the double range, either sign
          x = (unit(rng) < 0.5 ? -1.0 : 1.0) * std::pow(10.0, exponent(rng));
          break;
        default:  // a dense cluster and a far tail
          x = unit(rng) < 0.9 ? unit(rng) : 1e9 * unit(rng);
          break;
      }
    }
    std::sort(v.begin(), v.end());
    CAPTURE(trial, k);
    REQUIRE(mismatches(v) == 0);
  }
}
