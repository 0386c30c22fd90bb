// SPDX-License-Identifier: Apache-2.0
// Issue 39: the placement policies at the expert counts of the 2026 models. Kimi-K2's 384 routed experts
// (top-8) on one NVL72 rack at EP72, where 384 does not divide over the GPUs: each GPU takes
// ceil(384 / 72) = 6 slots and 48 of the 432 are redundant. Every policy must place and serve there
// (DIRECTOR, bounded to 32 GPUs, on EP32 with 13 slots). Solve times: bench/placement_scale_bench.cpp.
#include <algorithm>
#include <catch2/catch.hpp>

#include "experiments/assembly/build_simulation.hpp"
#include "experiments/assembly/experiment_config.hpp"
#include "sim/simulator.hpp"

using namespace epsim;

namespace {

constexpr int k_experts = 384;
constexpr int k_requests = 144;

struct Run {
  policies::Placement placement;
  serving::RunSummary summary;
};

Run run(const std::vector<std::string>& sets) {
  const auto cfg = experiments::load_config(std::string(EPSIM_TEST_DATA_DIR) + "/kimi_k2_nvl72.toml", sets);
  serving::SimulationParts parts = experiments::build_simulation(cfg, experiments::profile_pool_windows(cfg));
  REQUIRE(parts.pools.size() == 1);
  policies::Placement placement = parts.pools[0].placement;
  serving::Simulator sim(std::move(parts));
  return {std::move(placement), sim.run().summary};
}

// Checks the placement's shape on `gpus` GPUs of `slots` slots against the config: 3 MoE layers, every
// expert held, at most `slots` per GPU (the layout's own bound), and `filled` slots holding an expert.
void check_placement(const policies::Placement& p, int gpus, int slots, int filled) {
  REQUIRE(p.layers.size() == 3);
  for (const policies::LayerPlacement& l : p.layers) {
    REQUIRE(l.num_experts == k_experts);
    REQUIRE(l.num_gpus == gpus);
    REQUIRE(l.slots_per_gpu == slots);
    REQUIRE(l.phy2log.size() == static_cast<std::size_t>(gpus * slots));
    CHECK(std::count_if(l.phy2log.begin(), l.phy2log.end(), [](int e) { return e >= 0; }) == filled);
    for (int e = 0; e < k_experts; ++e) {
      CHECK(l.logcnt[static_cast<std::size_t>(e)] >= 1);
    }
  }
}

}  // namespace

TEST_CASE("384 experts on 72 GPUs: linear, replicated, EPLB (+ metro) and ViBE place and serve") {
  // One copy per expert (linear, ViBE): 384 of the 432 slots filled. Replicating policies fill all 432.
  for (const auto& [policy, routing, filled] :
       std::vector<std::tuple<std::string, std::string, int>>{{"linear", "even", 384},
                                                              {"replicated", "even", 432},
                                                              {"eplb", "even", 432},
                                                              {"eplb", "metro", 432},
                                                              {"vibe", "even", 384}}) {
    INFO(policy << " + " << routing);
    const Run r = run({"policy.placement=\"" + policy + "\"", "policy.routing=\"" + routing + "\""});
    check_placement(r.placement, 72, 6, filled);
    CHECK(r.summary.requests_finished == k_requests);
  }
}

TEST_CASE("384 experts on 72 GPUs: GEM and GRACE place and serve, and DIRECTOR on EP32", "[slow]") {
  const Run gem = run({"policy.placement=\"gem\""});
  check_placement(gem.placement, 72, 6, 384);
  CHECK(gem.summary.requests_finished == k_requests);
  // GRACE replicates some hot experts of each layer's heaviest group into the spare slots.
  const Run grace = run({"policy.placement=\"grace\"", "policy.routing=\"grace\""});
  REQUIRE(grace.placement.layers.size() == 3);
  for (const policies::LayerPlacement& l : grace.placement.layers) {
    const auto filled = std::count_if(l.phy2log.begin(), l.phy2log.end(), [](int e) { return e >= 0; });
    CHECK(filled >= k_experts);
    CHECK(filled <= 432);
  }
  CHECK(grace.summary.requests_finished == k_requests);
  // DIRECTOR is bounded to 32 GPUs: 384 + 32 redundant = 416 slots, 13 per GPU, one copy per expert.
  const Run director = run({"policy.placement=\"director\"", "cluster.gpus_per_node=32", "parallel.ep_size=32",
                            "parallel.redundant_experts=32"});
  check_placement(director.placement, 32, 13, 384);
  CHECK(director.summary.requests_finished == k_requests);
}

TEST_CASE("384 experts on 72 GPUs need the redundant slots that round them up, and DIRECTOR its bound") {
  REQUIRE_THROWS_WITH(run({"parallel.redundant_experts=0"}), Catch::Contains("parallel.redundant_experts") &&
                                                                 Catch::Contains("384 + 0") &&
                                                                 Catch::Contains("ep_size = 72"));
  REQUIRE_THROWS_WITH(run({"policy.placement=\"director\""}), Catch::Contains("policy.placement") &&
                                                                  Catch::Contains("at most 32 GPUs") &&
                                                                  Catch::Contains("got 72"));
}
