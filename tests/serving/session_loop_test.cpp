// SPDX-License-Identifier: Apache-2.0
// Closed-loop sessions through the simulator: each turn arrives its think time after the turn before it
// finished, and the observers hear that arrivals ended only after the last session's last turn.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>

#include "hardware/roofline.hpp"
#include "policies/even_routing.hpp"
#include "policies/linear_placement.hpp"
#include "sim/simulator.hpp"
#include "tests/support/tiny_model.hpp"
#include "workloads/synthetic_router.hpp"

using namespace epsim;

namespace {

serving::SimulationParts sessions(std::int64_t turns_total, double think_s) {
  const models::ModelSpec m = test::tiny_model(1);
  serving::SimulationParts p{
      .model = m,
      .cost = std::make_unique<hardware::RooflineCostModel>(test::paper_gpu(), std::vector<double>{1.0}),
      .topology = hardware::Topology(1, 1, hardware::LinkSpec{100.0, 1.0}, hardware::LinkSpec{10.0, 1.0}),
      .network = nullptr,
      .collectives = {.model = hardware::CollectiveModelKind::ports},
      .routing_source = std::make_unique<workloads::SyntheticRouter>(workloads::SyntheticRouterConfig{}, 1, 4, 1,
                                                                     core::RandomStreams(5)),
      .workload = {},
      .serving = {},
      .seed = 11,
  };
  p.workload.arrivals.rate_rps = 2.0;
  p.workload.num_requests = turns_total;
  p.workload.prompt.value = 8;
  p.workload.output.value = 3;
  p.workload.sessions.kind = workloads::SessionConfig::Kind::synthetic;
  p.workload.sessions.turns.value = 3;
  p.workload.sessions.message_tokens.value = 4;
  p.workload.sessions.answer_tokens.value = 2;
  p.workload.sessions.think_time.kind = workloads::ThinkTime::Kind::fixed;
  p.workload.sessions.think_time.mean_s = think_s;
  p.pools.push_back(serving::colocated_pool(
      1, 1, policies::LinearPlacement().place(policies::PlacementInput::shape(1, 4, 1, 1, 4, 1)),
      [] { return std::make_unique<policies::EvenRouting>(); }));
  p.serving.scheduler = serving::SchedulerConfig{4096, 8};
  return p;
}

// Records the arrivals and when the end of arrivals is announced.
struct ArrivalWatch : serving::Observer {
  std::int64_t arrivals = 0;
  std::int64_t arrivals_at_end = -1;
  int ends = 0;
  core::Time last_arrival_ns = -1;
  void on_arrival(const serving::RequestState&) override { ++arrivals; }
  void on_arrivals_end(core::Time last) override {
    ++ends;
    arrivals_at_end = arrivals;
    last_arrival_ns = last;
  }
};

}  // namespace

TEST_CASE("closed loop: a turn arrives think time after its session's previous turn finished") {
  serving::Simulator sim(sessions(12, 0.5));
  ArrivalWatch watch;
  sim.add_observer(&watch);
  const serving::SimulationResult res = sim.run();
  REQUIRE(res.requests.size() == 12);
  std::map<std::pair<std::int64_t, int>, const serving::RequestState*> turn;
  core::Time last_arrival = 0;
  for (const serving::RequestState& r : res.requests) {
    REQUIRE(r.finished());
    turn[{r.spec.session, r.spec.turn}] = &r;
    last_arrival = std::max(last_arrival, r.spec.arrival_ns);
  }
  int follow_ups = 0;
  for (const serving::RequestState& r : res.requests) {
    if (r.spec.turn > 0) {
      const serving::RequestState* prev = turn.at({r.spec.session, r.spec.turn - 1});
      REQUIRE(r.spec.arrival_ns == prev->finish_ns + core::from_seconds(0.5));
      // The history: 8 + 3, then 4 + 2 per later turn, and the new 4-token message.
      REQUIRE(r.spec.prompt_tokens == 8 + 3 + (r.spec.turn - 1) * 6 + 4);
      ++follow_ups;
    }
  }
  // num_requests counts turns: 12 of them, in sessions of at most 3.
  REQUIRE(turn.size() == 12);
  REQUIRE(follow_ups >= 6);
  REQUIRE(follow_ups == 12 - static_cast<int>(std::count_if(res.requests.begin(), res.requests.end(),
                                                            [](const auto& r) { return r.spec.turn == 0; })));
  // The end of arrivals comes after the last turn arrived (not when the 4th session started), with it.
  REQUIRE(watch.ends == 1);
  REQUIRE(watch.arrivals_at_end == 12);
  REQUIRE(watch.last_arrival_ns == last_arrival);
}
