// SPDX-License-Identifier: Apache-2.0
#include "workloads/recorded_picks.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <vector>

#include "tests/support/chi_square.hpp"

using namespace epsim;

TEST_CASE("uniform_below is uniform over its interval, also where rejection matters") {
  core::Rng rng(3);
  // 7 cells, 350,000 draws: the 99.99 % quantile of chi-square with 6 degrees of freedom is 27.9.
  std::vector<double> seen(7, 0.0);
  for (int d = 0; d < 350000; ++d) {
    const std::uint64_t x = workloads::uniform_below(rng, 7);
    REQUIRE(x < 7);
    seen[x] += 1.0;
  }
  CHECK(test::chi_square(seen, std::vector<double>(7, 50000.0)) < 27.9);
  for (int d = 0; d < 1000; ++d) {
    REQUIRE(workloads::uniform_below(rng, 1) == 0);
  }
  // n = 2^63 + 1: 2^64 mod n = 2^63 - 1, so about half the outputs are rejected; the halves of the interval
  // stay equally likely (0.5 within 4.5 sigma over 40,000 draws).
  const std::uint64_t n = (std::uint64_t{1} << 63) + 1;
  int low_half = 0;
  for (int d = 0; d < 40000; ++d) {
    const std::uint64_t x = workloads::uniform_below(rng, n);
    REQUIRE(x < n);
    low_half += x < n / 2 ? 1 : 0;
  }
  CHECK(low_half == Approx(20000).margin(4.5 * 100.0));
}

TEST_CASE("recorded picks draw each category with probability count / sum exactly") {
  // A record with empty categories and one that holds most picks.
  const std::vector<std::uint32_t> counts{5, 0, 3, 1, 7, 0, 0, 16};
  workloads::RecordedPicks table;
  REQUIRE(table.build(counts));
  REQUIRE(table.entries() == 32);
  core::Rng rng(8);
  const int draws = 320000;
  std::vector<double> seen(counts.size(), 0.0);
  for (int d = 0; d < draws; ++d) {
    seen[static_cast<std::size_t>(table.draw(rng))] += 1.0;
  }
  std::vector<double> expected(counts.size());
  for (std::size_t e = 0; e < counts.size(); ++e) {
    expected[e] = draws * static_cast<double>(counts[e]) / 32.0;
  }
  // Five non-empty categories: 4 degrees of freedom, 99.99 % quantile 23.5.
  CHECK(test::chi_square(seen, expected) < 23.5);
  CHECK(seen[1] == 0.0);
  CHECK(seen[5] == 0.0);
  CHECK(seen[6] == 0.0);
  // Nothing to draw from, or too much to expand: refused.
  REQUIRE_FALSE(table.build(std::vector<std::uint32_t>{0, 0, 0}));
  REQUIRE_FALSE(
      table.build(std::vector<std::uint32_t>{static_cast<std::uint32_t>(workloads::RecordedPicks::k_max_entries), 1}));
}

TEST_CASE("a record expands to each category's count of entries, in order, empty ones passed over") {
  core::Rng rng(4);
  workloads::RecordedPicks table;
  for (int trial = 0; trial < 200; ++trial) {
    // 1 to 300 categories, a third of them empty (the first and last ones often), counts up to 9, or up
    // to 40 in every other trial (runs longer than build's 8-entry blocks).
    const auto n = static_cast<std::size_t>(1 + workloads::uniform_below(rng, 300));
    std::vector<std::uint32_t> counts(n);
    std::vector<std::uint16_t> naive;
    for (std::size_t e = 0; e < n; ++e) {
      counts[e] = workloads::uniform_below(rng, 3) == 0
                      ? 0
                      : static_cast<std::uint32_t>(1 + workloads::uniform_below(rng, trial % 2 == 0 ? 9 : 40));
      naive.insert(naive.end(), counts[e], static_cast<std::uint16_t>(e));
    }
    if (naive.empty()) {
      REQUIRE_FALSE(table.build(counts));
      continue;
    }
    REQUIRE(table.build(counts));
    const auto got = table.expanded();
    REQUIRE(std::vector<std::uint16_t>(got.begin(), got.end()) == naive);
  }
}

TEST_CASE("tallied recorded picks are multinomial and place capped picks on the most recorded categories") {
  const std::vector<std::uint32_t> counts{4, 12, 0, 8, 8};
  workloads::RecordedPicks table;
  REQUIRE(table.build(counts));
  core::Rng rng(21);
  std::vector<std::int32_t> out(counts.size());
  std::vector<int> order;
  // Means and variances of Multinomial(40, counts / 32) over 20,000 tallies with no cap binding: mean 40 p,
  // variance 40 p (1 - p).
  const int trials = 20000;
  std::vector<double> sum(counts.size(), 0.0);
  std::vector<double> sum_sq(counts.size(), 0.0);
  for (int t = 0; t < trials; ++t) {
    workloads::tally_recorded(rng, table, 40, 40, counts, out, order);
    std::int64_t total = 0;
    for (std::size_t e = 0; e < out.size(); ++e) {
      sum[e] += out[e];
      sum_sq[e] += static_cast<double>(out[e]) * out[e];
      total += out[e];
    }
    REQUIRE(total == 40);
  }
  for (std::size_t e = 0; e < counts.size(); ++e) {
    const double p = counts[e] / 32.0;
    const double mean = sum[e] / trials;
    const double var = sum_sq[e] / trials - mean * mean;
    INFO("category " << e);
    CHECK(mean == Approx(40.0 * p).margin(5.0 * std::sqrt(40.0 * p * (1.0 - p) / trials) + 1e-12));
    CHECK(var == Approx(40.0 * p * (1.0 - p)).epsilon(0.05).margin(1e-12));
  }
  // Only category 1 recorded: 3 picks, cap 1 -> one on it, the two past the cap on the next in the order
  // of counts (all 0: ties to the lower index, so categories 0 and 2).
  const std::vector<std::uint32_t> one{0, 6, 0, 0, 0};
  REQUIRE(table.build(one));
  workloads::tally_recorded(rng, table, 3, 1, one, out, order);
  CHECK(out == std::vector<std::int32_t>{1, 1, 1, 0, 0});
  // With counts {2, 6, 0, 5, 0} the order is 1, 3, 0, 2, 4: 4 picks all on 1 with cap 1 fill 1, 3, 0, 2.
  const std::vector<std::uint32_t> three{0, 6, 0, 0, 0};
  const std::vector<std::uint32_t> order_counts{2, 6, 0, 5, 0};
  REQUIRE(table.build(three));
  workloads::tally_recorded(rng, table, 4, 1, order_counts, out, order);
  CHECK(out == std::vector<std::int32_t>{1, 1, 1, 1, 0});
}
