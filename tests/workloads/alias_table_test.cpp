// SPDX-License-Identifier: Apache-2.0
#include "workloads/alias_table.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <numeric>
#include <vector>

#include "tests/support/chi_square.hpp"

using namespace epsim;

namespace {

std::vector<double> skewed(std::size_t n) {
  std::vector<double> p(n);
  for (std::size_t i = 0; i < n; ++i) {
    p[i] = 1.0 / std::pow(static_cast<double>(i + 1), 0.9) + (i % 3 == 0 ? 0.5 : 0.0);
  }
  return p;
}

// The probability of each category a table's columns give, decoded from the packed entries by hand: column j
// keeps j with threshold_j / 2^(64 - bits) and gives its alias the rest, each column 1 / 2^bits of the
// draws. Long double keeps the sums exact enough to see a 2^-54 error.
std::vector<long double> implied(const workloads::AliasTables& t, std::size_t table, std::size_t n) {
  const int bits = t.bits();
  const std::size_t columns = std::size_t{1} << bits;
  const std::uint64_t* c = t.columns(table);
  std::vector<long double> q(columns, 0.0L);
  const long double coins = std::ldexp(1.0L, 64 - bits);
  for (std::size_t j = 0; j < columns; ++j) {
    const auto threshold = static_cast<long double>(c[j] >> bits);
    const std::size_t alias = c[j] & (columns - 1);
    const long double own = alias == j ? 1.0L : threshold / coins;
    q[j] += own / static_cast<long double>(columns);
    q[alias] += (1.0L - own) / static_cast<long double>(columns);
  }
  for (std::size_t j = n; j < columns; ++j) {
    REQUIRE(q[j] == 0.0L);  // padding columns are impossible
  }
  q.resize(n);
  return q;
}

}  // namespace

TEST_CASE("alias tables draw their probabilities exactly: chi-square at power-of-two and other sizes") {
  // 400,000 draws each; the 99.99 % quantiles of chi-square with 7, 5, 255 and 383 degrees of freedom are
  // 29.9, 25.7, 347.7 and 494.6 (the last two by Wilson-Hilferty).
  core::Rng rng(11);
  for (const std::size_t n : {std::size_t{8}, std::size_t{6}, std::size_t{256}, std::size_t{384}}) {
    const std::vector<double> p = skewed(n);
    const double sum = std::accumulate(p.begin(), p.end(), 0.0);
    workloads::AliasTable alias;
    alias.build(p);
    REQUIRE(alias.size() == n);
    const int draws = 400000;
    std::vector<double> seen(n, 0.0);
    for (int d = 0; d < draws; ++d) {
      const int e = alias.draw(rng);
      REQUIRE(e >= 0);
      REQUIRE(e < static_cast<int>(n));
      seen[static_cast<std::size_t>(e)] += 1.0;
    }
    std::vector<double> expected(n);
    for (std::size_t i = 0; i < n; ++i) {
      expected[i] = draws * p[i] / sum;
    }
    const double limit = n == 8 ? 29.9 : n == 6 ? 25.7 : n == 256 ? 347.7 : 494.6;
    INFO("n = " << n);
    CHECK(test::chi_square(seen, expected) < limit);
  }
}

TEST_CASE("packed alias columns hold every probability to the threshold's resolution") {
  // Decoded by hand, a table's columns must give back p / sum(p) within one threshold step 2^-(64 - bits)
  // per column (plus the build's double rounding), at sizes padded (6 -> 8, 384 -> 512, 1000 -> 1024) and not.
  for (const std::size_t n :
       {std::size_t{6}, std::size_t{8}, std::size_t{256}, std::size_t{384}, std::size_t{1000}, std::size_t{1024}}) {
    const std::vector<double> p = skewed(n);
    const long double sum = std::accumulate(p.begin(), p.end(), 0.0L);
    workloads::AliasTables t;
    t.resize(2, n);
    t.set(1, p);
    const int bits = t.bits();
    REQUIRE((std::size_t{1} << bits) >= n);
    REQUIRE((std::size_t{1} << bits) < 2 * n);
    REQUIRE(64 - bits >= 54);  // up to 1,024 categories
    const std::vector<long double> q = implied(t, 1, n);
    for (std::size_t i = 0; i < n; ++i) {
      INFO("n = " << n << ", category " << i);
      CHECK(std::abs(q[i] - static_cast<long double>(p[i]) / sum) < 1e-14L);
    }
  }
}

TEST_CASE("alias picks split a column exactly at its threshold") {
  // u's top bits choose the column, its low bits are the coin: coin = threshold - 1 keeps the column,
  // coin = threshold takes the alias. p = (1, 3) over 2 columns: column 0 holds 1/2 of its draws (threshold
  // 2^62) with alias 1; column 1 is certain.
  workloads::AliasTables t;
  t.resize(1, 2);
  t.set(0, std::vector<double>{1.0, 3.0});
  REQUIRE(t.bits() == 1);
  const std::uint64_t half = std::uint64_t{1} << 62;
  CHECK(workloads::alias_pick(t.columns(0), 1, half - 1) == 0);
  CHECK(workloads::alias_pick(t.columns(0), 1, half) == 1);
  CHECK(workloads::alias_pick(t.columns(0), 1, 0) == 0);
  CHECK(workloads::alias_pick(t.columns(0), 1, (std::uint64_t{1} << 63) - 1) == 1);
  CHECK(workloads::alias_pick(t.columns(0), 1, std::uint64_t{1} << 63) == 1);
  CHECK(workloads::alias_pick(t.columns(0), 1, ~std::uint64_t{0}) == 1);
}

TEST_CASE("alias tables: a certain category, impossible ones and a single one") {
  core::Rng rng(5);
  workloads::AliasTable two;
  two.build(std::vector<double>{1.0, 0.0});
  workloads::AliasTable certain;
  certain.build(std::vector<double>{0.0, 0.0, 2.5, 0.0, 0.0});  // padded to 8 columns
  workloads::AliasTable one;
  one.build(std::vector<double>{0.3});
  workloads::AliasTable zeros;
  zeros.build(std::vector<double>{0.0, 1.0, 0.0, 1.0, 0.0, 2.0});
  std::vector<int> seen(6, 0);
  for (int d = 0; d < 100000; ++d) {
    REQUIRE(two.draw(rng) == 0);
    REQUIRE(certain.draw(rng) == 2);
    REQUIRE(one.draw(rng) == 0);
    ++seen[static_cast<std::size_t>(zeros.draw(rng))];
  }
  CHECK(seen[0] == 0);
  CHECK(seen[2] == 0);
  CHECK(seen[4] == 0);
  // Exactly: no column keeps or aliases an impossible category.
  workloads::AliasTables t;
  t.resize(1, 6);
  t.set(0, std::vector<double>{0.0, 1.0, 0.0, 1.0, 0.0, 2.0});
  const std::vector<long double> q = implied(t, 0, 6);
  CHECK(q[0] == 0.0L);
  CHECK(q[2] == 0.0L);
  CHECK(q[4] == 0.0L);
  CHECK(std::abs(q[5] - 0.5L) < 1e-15L);
}

TEST_CASE("alias tables refuse what they cannot hold") {
  workloads::AliasTables t;
  CHECK_THROWS_WITH(t.resize(1, 65537), Catch::Contains("65,536"));
  t.resize(1, 4);
  CHECK_THROWS_WITH(t.set(0, std::vector<double>{1.0, 1.0}), Catch::Contains("wrong size"));
}
