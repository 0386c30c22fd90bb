#include <catch2/catch.hpp>
#include <numeric>
#include <vector>

#include "workloads/synthetic_router.hpp"

using namespace epsim;

TEST_CASE("Zipf probabilities are capped at 1/k by water-filling (hand example)") {
  // Weights 1, 1/2, 1/3, 1/4 (sum 25/12): p = 0.48, 0.24, 0.16, 0.12. With k = 3 the cap is 1/3: the top
  // expert is pinned at 1/3 and the others share 2/3 in proportion 1/2 : 1/3 : 1/4 (sum 13/12).
  const auto p = workloads::capped_zipf_probabilities(4, 1.0, 3);
  REQUIRE(p[0] == Approx(1.0 / 3.0));
  REQUIRE(p[1] == Approx(0.5 / (13.0 / 12.0) * 2.0 / 3.0));
  REQUIRE(p[2] == Approx((1.0 / 3.0) / (13.0 / 12.0) * 2.0 / 3.0));
  REQUIRE(p[3] == Approx(0.25 / (13.0 / 12.0) * 2.0 / 3.0));
  const auto uncapped = workloads::capped_zipf_probabilities(4, 1.0, 2);
  REQUIRE(uncapped[0] == Approx(0.48));
  REQUIRE(uncapped[3] == Approx(0.12));
  const auto uniform = workloads::capped_zipf_probabilities(8, 0.0, 2);
  for (double x : uniform) {
    REQUIRE(x == Approx(0.125));
  }
}

TEST_CASE("every step's counts sum to tokens x top_k and never exceed the token count") {
  workloads::SyntheticRouter r({1.2}, 4, 64, 8, core::RandomStreams(1));
  std::vector<std::int32_t> counts(64);
  for (std::int64_t tokens : {1, 3, 17, 256, 4096}) {
    for (int layer = 0; layer < 4; ++layer) {
      r.sample(layer, tokens, counts);
      REQUIRE(std::accumulate(counts.begin(), counts.end(), std::int64_t{0}) == tokens * 8);
      for (auto c : counts) {
        REQUIRE(c >= 0);
        REQUIRE(c <= tokens);
      }
    }
  }
}

TEST_CASE("each layer has its own hot set and long-run shares match the probabilities") {
  const int experts = 16;
  workloads::SyntheticRouter r({1.0}, 2, experts, 2, core::RandomStreams(4));
  REQUIRE(std::vector<int>(r.ranking(0).begin(), r.ranking(0).end()) !=
          std::vector<int>(r.ranking(1).begin(), r.ranking(1).end()));
  std::vector<double> total(experts, 0.0);
  std::vector<std::int32_t> counts(experts);
  const int steps = 2000;
  const std::int64_t tokens = 64;
  for (int s = 0; s < steps; ++s) {
    r.sample(0, tokens, counts);
    for (int e = 0; e < experts; ++e) {
      total[static_cast<std::size_t>(e)] += counts[static_cast<std::size_t>(e)];
    }
  }
  const double picks = static_cast<double>(steps * tokens * 2);
  const auto p = r.sorted_probabilities();
  for (int rank = 0; rank < experts; ++rank) {
    const int e = r.ranking(0)[static_cast<std::size_t>(rank)];
    const double share = total[static_cast<std::size_t>(e)] / picks;
    const double sd = std::sqrt(p[static_cast<std::size_t>(rank)] * (1 - p[static_cast<std::size_t>(rank)]) / picks);
    INFO("rank " << rank);
    REQUIRE(std::abs(share - p[static_cast<std::size_t>(rank)]) < 5 * sd + 1e-4);
  }
}

TEST_CASE("the router is reproducible from the seed") {
  workloads::SyntheticRouter a({0.8}, 3, 32, 4, core::RandomStreams(77));
  workloads::SyntheticRouter b({0.8}, 3, 32, 4, core::RandomStreams(77));
  std::vector<std::int32_t> ca(32);
  std::vector<std::int32_t> cb(32);
  for (int s = 0; s < 100; ++s) {
    a.sample(s % 3, 100, ca);
    b.sample(s % 3, 100, cb);
    REQUIRE(ca == cb);
  }
}
