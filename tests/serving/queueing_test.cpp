// SPDX-License-Identifier: Apache-2.0
// Serving-level checks against analytic results: an M/D/1 queue, chunked prefill timing.
#include <catch2/catch.hpp>

#include <sstream>
#include "tests/support/csv.hpp"

#include "hardware/roofline.hpp"
#include "policies/even_routing.hpp"
#include "policies/linear_placement.hpp"
#include "sim/run_logs.hpp"
#include "sim/simulator.hpp"
#include "tests/support/tiny_model.hpp"
#include "workloads/synthetic_router.hpp"

using namespace epsim;

namespace {

// A one-layer model on one GPU: every step of one token costs the same, whatever expert it picks.
serving::SimulationParts tiny(double rate, std::int64_t requests, std::int64_t prompt, std::int64_t output,
                              serving::SchedulerConfig sched) {
  const models::ModelSpec m = test::tiny_model(1);
  hardware::GpuSpec g = test::paper_gpu();
  g.efficiency = hardware::GpuSpec{}.efficiency;  // default efficiencies and launch cost
  g.kernel_launch_us = hardware::GpuSpec{}.kernel_launch_us;
  serving::SimulationParts p{
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
  p.pools.push_back(serving::colocated_pool(
      1, 1, policies::LinearPlacement().place(policies::PlacementInput::shape(1, 4, 1, 1, 4, 1)),
      [] { return std::make_unique<policies::EvenRouting>(); }));
  p.serving.scheduler = sched;
  p.serving.step_overhead_us = 20.0;
  return p;
}

// tiny() with batches of 4 one-token prompts arriving at one instant, under static batching with at most
// 4 running (a batch is one arrival).
serving::SimulationParts batches_of_4(double rate, std::int64_t requests, std::int64_t output) {
  serving::SchedulerConfig sched{4096, 4};
  sched.static_batching = true;
  serving::SimulationParts p = tiny(rate, requests, 1, output, sched);
  p.workload.arrivals.kind = workloads::ArrivalConfig::Kind::batches;
  p.workload.arrivals.batch_size = 4;
  return p;
}

// (prefill, decode) tokens of every step in a step log.
std::vector<std::pair<long long, long long>> step_tokens(const serving::StepLog& log) {
  std::istringstream csv(log.csv());
  std::string line;
  std::getline(csv, line);
  std::vector<std::pair<long long, long long>> tokens;
  while (std::getline(csv, line)) {
    const std::vector<std::string> f = test::csv_cells(line);
    tokens.emplace_back(std::stoll(f[5]), std::stoll(f[6]));
  }
  return tokens;
}

}  // namespace

TEST_CASE("M/D/1: one request at a time, deterministic service, Poisson arrivals") {
  const serving::SchedulerConfig one_at_a_time{1, 1};
  // The service time D: one request alone.
  serving::Simulator alone(tiny(1.0, 1, 1, 1, one_at_a_time));
  const auto a = alone.run();
  const double d_s = core::to_seconds(a.requests[0].finish_ns - a.requests[0].spec.arrival_ns);
  REQUIRE(d_s > 0.0);
  // At utilisation rho = 0.7 the mean time in system is D + rho D / (2 (1 - rho)) (Pollaczek-Khinchine).
  const double rho = 0.7;
  const double lambda = rho / d_s;
  const int n = 20000;
  serving::Simulator sim(tiny(lambda, n, 1, 1, one_at_a_time));
  const auto res = sim.run();
  REQUIRE(res.summary.requests_finished == n);
  const double w_expected = d_s + rho * d_s / (2.0 * (1.0 - rho));
  REQUIRE(res.summary.e2e_ms.mean / 1e3 == Approx(w_expected).epsilon(0.05));
  // Every step is one request's service: the server is busy a share rho of the time.
  const double busy = static_cast<double>(res.summary.steps) * res.summary.mean_step_ms / 1e3;
  REQUIRE(res.summary.steps == n);
  REQUIRE(busy / res.summary.makespan_s == Approx(rho).epsilon(0.03));
  // Little's law: the time-average number in the system is lambda_effective x W.
  double in_system = 0.0;
  for (const auto& r : res.requests) {
    in_system += core::to_seconds(r.finish_ns - r.spec.arrival_ns);
  }
  const double span = core::to_seconds(res.requests.back().finish_ns);
  REQUIRE(in_system / span == Approx(static_cast<double>(n) / span * res.summary.e2e_ms.mean / 1e3).epsilon(1e-9));
  REQUIRE(in_system / span == Approx(lambda * w_expected).epsilon(0.06));
}

TEST_CASE("chunked prefill: a long prompt's TTFT is the sum of its chunk steps") {
  serving::SchedulerConfig sched{4096, 16};
  serving::Simulator sim(tiny(1.0, 1, 10000, 3, sched));
  serving::StepLog log;
  sim.add_observer(&log);
  const auto res = sim.run();
  // Steps: chunks of 4096, 4096 and 1808 tokens, then two decodes.
  std::vector<core::Time> durations;
  std::istringstream csv(log.csv());
  std::string line;
  std::getline(csv, line);
  while (std::getline(csv, line)) {
    const std::vector<std::string> f = test::csv_cells(line);
    durations.push_back(std::stoll(f[4]));
    if (durations.size() <= 3) {
      REQUIRE(std::stoll(f[5]) == (durations.size() < 3 ? 4096 : 1808));
    }
  }
  REQUIRE(durations.size() == 5);
  const auto& r = res.requests[0];
  REQUIRE(r.first_token_ns - r.spec.arrival_ns == durations[0] + durations[1] + durations[2]);
  REQUIRE(r.finish_ns - r.first_token_ns == durations[3] + durations[4]);
}

TEST_CASE("a batch arriving at one instant is queued whole before a step forms, and batches do not mix") {
  // Batches of 4 one-token prompts with 3 output tokens, every 4 / 40000 s = 0.1 ms: faster than a batch
  // is served, so the next batch is always queued behind the running one.
  serving::Simulator sim(batches_of_4(40000.0, 12, 3));
  serving::StepLog log;
  sim.add_observer(&log);
  const auto res = sim.run();
  REQUIRE(res.summary.requests_finished == 12);
  const auto tokens = step_tokens(log);
  // Per batch: one step prefilling all 4 prompts (token 1), then 2 decode steps of 4 (tokens 2 and 3).
  const std::vector<std::pair<long long, long long>> batch{{4, 0}, {0, 4}, {0, 4}};
  std::vector<std::pair<long long, long long>> want;
  for (int b = 0; b < 3; ++b) {
    want.insert(want.end(), batch.begin(), batch.end());
  }
  REQUIRE(tokens == want);
  // The queue did build up: a step takes longer than a third of the 0.1 ms between batches.
  REQUIRE(res.summary.mean_step_ms > 0.1 / 3.0);
}

TEST_CASE("a step that ends at the instant a batch arrives waits for the whole batch") {
  // One batch of 4 one-token prompts with two output tokens is served in d ns (a prefill, a decode).
  serving::Simulator first(batches_of_4(1.0, 4, 2));
  const core::Time d = first.run().requests[0].finish_ns;
  REQUIRE(d > 0);
  // Batches every d ns: each arrives exactly when the previous batch's decode step ends. That step's end
  // was scheduled after the batch's first arrival (at time 0), so it runs between its arrivals.
  serving::Simulator sim(batches_of_4(4e9 / static_cast<double>(d), 12, 2));
  serving::StepLog log;
  sim.add_observer(&log);
  const auto res = sim.run();
  REQUIRE(res.requests[4].spec.arrival_ns == d);
  const auto tokens = step_tokens(log);
  // Every batch: a prefill of all 4 prompts, then one decode of 4.
  const std::vector<std::pair<long long, long long>> want{{4, 0}, {0, 4}, {4, 0}, {0, 4}, {4, 0}, {0, 4}};
  REQUIRE(tokens == want);
}
