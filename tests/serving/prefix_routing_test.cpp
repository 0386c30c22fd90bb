// SPDX-License-Identifier: Apache-2.0
// Prefix caching inside whole runs: cache-aware routing keeps each shared system prompt on the DP rank
// that holds it (SGLang's router: the longest match when it covers more than half the prompt, else the
// emptiest cache), and the run's hit rate is what its requests found, counted again from them.
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <vector>

#include "hardware/roofline.hpp"
#include "policies/even_routing.hpp"
#include "policies/linear_placement.hpp"
#include "sim/simulator.hpp"
#include "tests/support/tiny_model.hpp"
#include "workloads/synthetic_router.hpp"

using namespace epsim;
using namespace epsim::serving;

namespace {

// A one-layer model on 2 GPUs (one EP group, two DP ranks), requests at `rate` carrying one of two system
// prompts of 64 tokens (uniform) before 8 tokens of their own, 2 output tokens; blocks of 16 tokens.
SimulationParts two_ranks(LoadBalancer balancer, double rate) {
  const models::ModelSpec m = test::tiny_model(1);
  hardware::GpuSpec g = test::paper_gpu();
  g.efficiency = hardware::GpuSpec{}.efficiency;
  g.kernel_launch_us = hardware::GpuSpec{}.kernel_launch_us;
  SimulationParts p{
      .model = m,
      .cost = std::make_unique<hardware::RooflineCostModel>(g, std::vector<double>{1.0, 1.0}),
      .topology = hardware::Topology(1, 2, hardware::LinkSpec{100.0, 1.0}, hardware::LinkSpec{10.0, 1.0}),
      .network = nullptr,
      .collectives = {.model = hardware::CollectiveModelKind::ports},
      .routing_source = std::make_unique<workloads::SyntheticRouter>(workloads::SyntheticRouterConfig{}, 1, 4, 2,
                                                                     core::RandomStreams(5)),
      .workload = {},
      .serving = {},
      .seed = 11,
  };
  p.workload.arrivals.rate_rps = rate;
  p.workload.num_requests = 200;
  p.workload.prompt.value = 8;
  p.workload.output.value = 2;
  p.workload.shared_prefix.prompts = 2;
  p.workload.shared_prefix.tokens.value = 64;
  p.workload.shared_prefix.zipf_s = 0.0;
  p.pools.push_back(colocated_pool(2, 2,
                                   policies::LinearPlacement().place(policies::PlacementInput::shape(1, 4, 2, 1, 4, 1)),
                                   [] { return std::make_unique<policies::EvenRouting>(); }));
  p.pools.back().kv_blocks_per_gpu = 1000;
  p.serving.scheduler.kv_block_tokens = 16;
  p.serving.prefix_cache.enabled = true;
  p.serving.load_balancer = balancer;
  p.serving.step_overhead_us = 20.0;
  return p;
}

// Sums what the steps report: prompt tokens found cached at admission, tokens emitted.
struct StepSums final : Observer {
  void on_step(const StepRecord& s) override {
    cached += s.cached_tokens;
    emitted += s.output_tokens;
  }
  std::int64_t cached = 0;
  std::int64_t emitted = 0;
};

}  // namespace

TEST_CASE("cache-aware routing keeps each shared system prompt on the rank that caches it") {
  Simulator sim(two_ranks(LoadBalancer::cache_aware, 2.0));
  StepSums steps;
  sim.add_observer(&steps);
  const SimulationResult res = sim.run();
  REQUIRE(res.summary.requests_finished == 200);
  // The steps' counts add up to the requests' (no preemption here: each admitted once).
  REQUIRE(steps.emitted == 200 * 2);
  // Which ranks each system prompt (its first segment) went to.
  std::map<std::uint64_t, std::set<int>> ranks_of;
  std::int64_t cached = 0;
  std::int64_t prompt = 0;
  for (const RequestState& r : res.requests) {
    REQUIRE(r.spec.content.size() == 2);
    ranks_of[r.spec.content[0].id].insert(r.rank);
    cached += r.cached_tokens;
    prompt += r.spec.prompt_tokens;
  }
  // The first request of each prompt finds nothing (the second goes to the emptier rank); every later
  // one matches its 64 shared tokens (4 blocks, 64 of 72 tokens: above 0.5) on that rank.
  REQUIRE(ranks_of.size() == 2);
  for (const auto& [id, ranks] : ranks_of) {
    REQUIRE(ranks.size() == 1);
  }
  REQUIRE(*ranks_of.begin()->second.begin() != *ranks_of.rbegin()->second.begin());
  REQUIRE(cached == 64 * (200 - 2));
  REQUIRE(steps.cached == cached);
  REQUIRE(res.prefix_cache.cached_tokens == cached);
  REQUIRE(res.prefix_cache.prompt_tokens == prompt);
  REQUIRE(res.prefix_cache.requests_hit == 198);
  REQUIRE(res.prefix_cache.hit_rate_tokens() == Approx(64.0 * 198 / (72.0 * 200)));
}

TEST_CASE("without cache-aware routing, an idle group sends every request to its first rank") {
  // Round-robin over one group: each request goes to the group's least loaded rank; at this low rate
  // both are idle at every arrival and rank 0 takes all (ties to the lowest): one miss per prompt.
  Simulator sim(two_ranks(LoadBalancer::round_robin, 2.0));
  const SimulationResult res = sim.run();
  std::int64_t misses = 0;
  std::set<int> ranks;
  for (const RequestState& r : res.requests) {
    misses += r.cached_tokens == 0 ? 1 : 0;
    ranks.insert(r.rank);
  }
  REQUIRE(ranks == std::set<int>{0});
  REQUIRE(misses == 2);
}
