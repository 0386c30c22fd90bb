// SPDX-License-Identifier: Apache-2.0
// Which configured cap held back waiting requests (metrics.limits): the scheduler's tally for one
// step by hand, then whole runs: a seat cap far below Little's L binds in nearly every step and caps
// throughput at seats / residence time; a large cap never binds; a small token budget or KV cache binds.
#include <catch2/catch.hpp>

#include <vector>

#include "hardware/roofline.hpp"
#include "policies/even_routing.hpp"
#include "policies/linear_placement.hpp"
#include "sim/scheduler.hpp"
#include "sim/simulator.hpp"
#include "tests/support/tiny_model.hpp"
#include "workloads/synthetic_router.hpp"

using namespace epsim;
using namespace epsim::serving;

namespace {

RequestState req(std::int64_t id, std::int64_t prompt, std::int64_t output) {
  RequestState r;
  r.spec = workloads::RequestSpec{id, 0, prompt, output};
  return r;
}

// `n` requests of `prompt` and `output` tokens queued on rank 0 of `s`, then one batch formed.
CapTally one_step(Scheduler& s, int n, std::int64_t prompt, std::int64_t output) {
  std::vector<RequestState> reqs;
  for (int i = 0; i < n; ++i) {
    reqs.push_back(req(i, prompt, output));
  }
  for (int i = 0; i < n; ++i) {
    s.enqueue(0, i, reqs);
  }
  Batch b;
  REQUIRE(s.form_batch(reqs, b));
  return s.last_caps();
}

// A one-layer model on one GPU (one DP rank) with `kv_blocks` blocks of 16 tokens (0: unlimited).
SimulationParts tiny(double rate, std::int64_t requests, std::int64_t prompt, std::int64_t output,
                     SchedulerConfig sched, std::int64_t kv_blocks = 0) {
  const models::ModelSpec m = test::tiny_model(1);
  hardware::GpuSpec g = test::paper_gpu();
  g.efficiency = hardware::GpuSpec{}.efficiency;
  g.kernel_launch_us = hardware::GpuSpec{}.kernel_launch_us;
  SimulationParts p{
      .model = m,
      .cost = std::make_unique<hardware::RooflineCostModel>(g, std::vector<double>{1.0}),
      .topology = hardware::Topology(1, 1, hardware::LinkSpec{100.0, 1.0}, hardware::LinkSpec{10.0, 1.0}),
      .network = nullptr,
      .collectives = {.model = hardware::CollectiveModelKind::ports},
      .routing_source = std::make_unique<workloads::SyntheticRouter>(workloads::SyntheticRouterConfig{}, 1, 4, 1,
                                                                     core::RandomStreams(5)),
      .workload = {},
      .serving = {},
      .seed = 11,
  };
  p.workload.arrivals.rate_rps = rate;
  p.workload.num_requests = requests;
  p.workload.prompt.value = prompt;
  p.workload.output.value = output;
  p.pools.push_back(colocated_pool(1, 1,
                                   policies::LinearPlacement().place(policies::PlacementInput::shape(1, 4, 1, 1, 4, 1)),
                                   [] { return std::make_unique<policies::EvenRouting>(); }));
  p.pools.back().kv_blocks_per_gpu = kv_blocks;
  p.serving.scheduler = sched;
  p.serving.step_overhead_us = 20.0;
  return p;
}

// Mean step time of one request alone (prompt 1 token, `output` tokens: `output` steps).
double alone_step_ns(std::int64_t output) {
  Simulator alone(tiny(1.0, 1, 1, output, SchedulerConfig{4096, 256}));
  const SimulationResult a = alone.run();
  REQUIRE(a.summary.steps == output);
  return a.summary.mean_step_ms * 1e6;
}

}  // namespace

TEST_CASE("one step's tally: the cap that stopped admissions with requests still waiting") {
  SECTION("seats: 2 seats, 5 short requests, budget to spare") {
    Scheduler s(1, SchedulerConfig{4096, 2});
    const CapTally t = one_step(s, 5, 10, 4);
    CHECK(t.rank_steps == 1);
    CHECK(t[AdmissionCap::seats] == 1);
    CHECK(t[AdmissionCap::batch_tokens] == 0);
    CHECK(t[AdmissionCap::kv_cache] == 0);
  }
  SECTION("batch tokens: 100 tokens, prompts of 60: the second takes the last 40, three wait") {
    Scheduler s(1, SchedulerConfig{100, 16});
    const CapTally t = one_step(s, 5, 60, 4);
    CHECK(t[AdmissionCap::batch_tokens] == 1);
    CHECK(t[AdmissionCap::seats] == 0);
    CHECK(t[AdmissionCap::kv_cache] == 0);
  }
  SECTION("KV cache: 4 blocks of 16 tokens hold the first 48-token prompt (3 blocks) and not the second") {
    Scheduler s(1, SchedulerConfig{4096, 16}, 4);
    const CapTally t = one_step(s, 3, 48, 4);
    CHECK(t[AdmissionCap::kv_cache] == 1);
    CHECK(t[AdmissionCap::seats] == 0);
    CHECK(t[AdmissionCap::batch_tokens] == 0);
  }
  SECTION("nothing waits: no cap bound, and two ranks make two rank-steps") {
    Scheduler s(2, SchedulerConfig{4096, 16});
    const CapTally t = one_step(s, 3, 10, 4);
    CHECK(t.rank_steps == 2);
    CHECK(t[AdmissionCap::seats] + t[AdmissionCap::batch_tokens] + t[AdmissionCap::kv_cache] == 0);
  }
}

TEST_CASE("a seat cap far below Little's L binds in nearly every step and sets the throughput") {
  // Prompts of 1 token, 16 output tokens: a request holds its seat for 16 steps. With c = 4 seats the
  // rank serves at most X = c / (16 x step) req/s (Little: L = c = X W); offered twice that, the queue
  // never empties once it forms.
  constexpr std::int64_t output = 16;
  constexpr std::int64_t seats = 4;
  const double step_s = alone_step_ns(output) / 1e9;
  const double capacity_rps = static_cast<double>(seats) / (static_cast<double>(output) * step_s);
  const double rate = 2.0 * capacity_rps;
  SimulationParts parts = tiny(rate, 2000, 1, output, SchedulerConfig{4096, seats});
  parts.serving.window = {.warmup_s = 200.0 / rate, .cooldown_s = 100.0 / rate};
  Simulator sim(std::move(parts));
  const SimulationResult r = sim.run();
  const CapTally& caps = r.summary.caps;
  REQUIRE(caps.rank_steps == r.summary.steps);  // one rank
  CHECK(caps.binding_fraction(AdmissionCap::seats) > 0.99);
  CHECK(caps.limits(AdmissionCap::seats));
  CHECK_FALSE(caps.limits(AdmissionCap::batch_tokens));
  CHECK_FALSE(caps.limits(AdmissionCap::kv_cache));
  // Little's law with every seat taken: the rank serves X = c / (16 x step), so 2,000 requests take
  // 2,000 / X, twice as long as they take to arrive.
  const double little_rps = static_cast<double>(seats) / (static_cast<double>(output) * r.summary.mean_step_ms / 1e3);
  CHECK(r.summary.makespan_s == Approx(2000.0 / little_rps).epsilon(0.05));
  CHECK(r.summary.makespan_s > 1.8 * 2000.0 / rate);

  SECTION("the same load with 256 seats: L = X W is about 2 x 4 = 8 requests, the cap never binds") {
    SimulationParts big = tiny(rate, 2000, 1, output, SchedulerConfig{4096, 256});
    big.serving.window = {.warmup_s = 200.0 / rate, .cooldown_s = 100.0 / rate};
    Simulator s(std::move(big));
    const SimulationResult b = s.run();
    CHECK(b.summary.caps.rank_steps == b.summary.steps);
    CHECK(b.summary.caps[AdmissionCap::seats] == 0);
    CHECK(b.summary.caps[AdmissionCap::batch_tokens] == 0);
    CHECK(b.summary.caps[AdmissionCap::kv_cache] == 0);
    CHECK(b.summary.makespan_s == Approx(2000.0 / rate).epsilon(0.1));  // served as fast as they arrive
  }
}

TEST_CASE("a token budget below the prompt rate binds, and so does a KV cache of a few requests") {
  constexpr std::int64_t output = 16;
  const double step_s = alone_step_ns(output) / 1e9;
  SECTION("batch tokens: prompts of 256 tokens through a budget of 64 per step") {
    // A prompt needs 4 steps of budget: at most one prompt per 4 steps enters, offered one per step.
    SimulationParts p = tiny(1.0 / step_s, 600, 256, output, SchedulerConfig{64, 256});
    p.serving.window = {.warmup_s = 100.0 * step_s, .cooldown_s = 50.0 * step_s};
    Simulator sim(std::move(p));
    const SimulationResult r = sim.run();
    CHECK(r.summary.caps.limits(AdmissionCap::batch_tokens));
    CHECK(r.summary.caps.binding_fraction(AdmissionCap::batch_tokens) > 0.9);
    CHECK(r.summary.caps[AdmissionCap::seats] == 0);
  }
  SECTION("KV cache: 8 blocks of 16 tokens, requests of 1 + 16 tokens need 2 blocks each") {
    // At most 4 requests hold blocks at once (3 once the watermark's block is kept): the same offered
    // load as above the seat cap binds the cache instead.
    SimulationParts p =
        tiny(2.0 * 4.0 / (static_cast<double>(output) * step_s), 1000, 1, output, SchedulerConfig{4096, 256}, 8);
    p.serving.window = {.warmup_s = 100.0 * step_s, .cooldown_s = 50.0 * step_s};
    Simulator sim(std::move(p));
    const SimulationResult r = sim.run();
    CHECK(r.summary.caps.limits(AdmissionCap::kv_cache));
    CHECK(r.summary.caps.binding_fraction(AdmissionCap::kv_cache) > 0.9);
    CHECK(r.summary.caps[AdmissionCap::seats] == 0);
    CHECK(r.summary.caps[AdmissionCap::batch_tokens] == 0);
  }
}
