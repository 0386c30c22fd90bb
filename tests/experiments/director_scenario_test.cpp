// SPDX-License-Identifier: Apache-2.0
// DIRECTOR in a run (tests/data/director_scenario.toml: batches of requests served one after another,
// the next one queued while the current one runs, on a drifting synthetic workload): with an oracle
// predictor the proactive placement beats the online reactive one; re-optimisation happens before each
// queued batch; re-optimised placements migrate only in the compute phases of steps, never while a
// dispatch or combine is on the wire, continue over later steps when a step's byte bound runs out; the
// predictor's accuracy comes from the paper's Table II.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <map>

#include "experiments/assembly/build_simulation.hpp"
#include "experiments/assembly/experiment_config.hpp"
#include "policies/director/director_trigger.hpp"

using namespace epsim;

namespace {
const std::string k_config = std::string(EPSIM_TEST_DATA_DIR) + "/director_scenario.toml";

struct Interval {
  double start;
  double end;
};

// Collects every all-to-all's and every migration's interval on the simulated clock.
class Timeline final : public serving::Observer {
 public:
  void on_layer(const serving::LayerRecord& r) override {
    const auto t0 = static_cast<double>(r.step_start_ns) + r.offset_ns;
    const double dispatch = t0 + r.attention_phase_ns;
    collectives.push_back({dispatch, dispatch + r.dispatch_ns});
    const double combine = dispatch + r.dispatch_ns + r.expert_max_ns;
    collectives.push_back({combine, combine + r.combine_ns});
  }
  void on_step(const serving::StepRecord& r) override {
    first_step_ns = std::min(first_step_ns, static_cast<double>(r.start_ns));
  }
  void on_rebalance(int, core::Time time_ns, policies::RebalanceKind) override {
    rebalances_ns.push_back(static_cast<double>(time_ns));
  }
  void on_migration(int, core::Time start_ns, core::Time end_ns, double b) override {
    migrations.push_back({static_cast<double>(start_ns), static_cast<double>(end_ns)});
    bytes += b;
    steps.push_back(start_ns);
  }
  std::vector<Interval> collectives;
  std::vector<Interval> migrations;
  std::vector<core::Time> steps;
  std::vector<double> rebalances_ns;
  double first_step_ns = std::numeric_limits<double>::infinity();
  double bytes = 0.0;
};

// The scenario's DIRECTOR online: re-optimise once a new batch is queued, for that batch's work; then
// `more` overrides.
std::vector<std::string> director_sets(const std::vector<std::string>& more) {
  std::vector<std::string> sets{"policy.rebalance.trigger=director", "policy.rebalance.when=arrivals",
                                "policy.rebalance.predict=queued", "policy.rebalance.horizon_steps=64"};
  sets.insert(sets.end(), more.begin(), more.end());
  return sets;
}

std::map<std::string, double> stats_of(const serving::SimulationResult& r) {
  std::map<std::string, double> out;
  for (const policies::TriggerStat& s : r.trigger_stats) {
    out[s.name] = s.value();
  }
  return out;
}

serving::SimulationResult run(const std::vector<std::string>& sets, Timeline& timeline) {
  const auto cfg = experiments::load_config(k_config, sets);
  serving::Simulator sim(experiments::build_simulation(cfg, experiments::profile_pool_windows(cfg)));
  sim.add_observer(&timeline);
  return sim.run();
}
}  // namespace

TEST_CASE("DIRECTOR's migrations never overlap an all-to-all and carry every moved expert's weights") {
  Timeline t;
  // Token-only curves: with them the LP's value is a certified bound (with C_g(n, a) an estimate).
  const auto r = run(director_sets({"workload.num_requests=40", "policy.rebalance.interval_steps=20",
                                    "policy.rebalance.horizon_steps=20", "policy.rebalance.predictor=oracle",
                                    "policy.cost_profile.activation_aware=false"}),
                     t);
  REQUIRE(r.summary.requests_finished == 40);
  REQUIRE(r.rebalances >= 1);
  REQUIRE(r.expert_moves > 0);
  // The summary's counters: every applied change came from a re-optimisation, whose rounded placement
  // is never below its LP bound.
  const std::map<std::string, double> stats = stats_of(r);
  REQUIRE(stats.at("reoptimisations") >= static_cast<double>(r.rebalances));
  REQUIRE(stats.at("lp_gap_mean") >= 1.0 - 1e-9);
  REQUIRE_FALSE(t.migrations.empty());
  // Nothing moves while a collective is under way (touching ends allowed: whole-ns rounding inwards).
  std::size_t overlaps = 0;
  for (const Interval& m : t.migrations) {
    for (const Interval& c : t.collectives) {
      overlaps += m.start < c.end - 1e-6 && c.start < m.end - 1e-6 ? 1 : 0;
    }
  }
  REQUIRE(overlaps == 0);
  // Every started move's bytes arrive (a last migration may still be under way when the run ends).
  const double expert_bytes = r.migration_bytes / static_cast<double>(r.expert_moves);
  REQUIRE(t.bytes <= r.migration_bytes * (1.0 + 1e-9));
  REQUIRE(t.bytes >= r.migration_bytes - static_cast<double>(r.expert_moves) * expert_bytes * 0.5 - 1.0);
}

TEST_CASE("DIRECTOR's migrations continue over later steps when a step may move only so much") {
  Timeline t;
  const auto r =
      run(director_sets({"workload.num_requests=40", "policy.rebalance.mode=reactive",
                         "policy.rebalance.interval_steps=20", "policy.rebalance.migration_max_gb_per_step=0.05"}),
          t);
  REQUIRE(r.rebalances >= 1);
  // 0.05 GB per step: a step's migration intervals together carry at most that.
  REQUIRE_FALSE(t.steps.empty());
  std::vector<core::Time> distinct = t.steps;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  // One re-placement of many experts (each ~17 MB) needs many steps at 50 MB per step.
  REQUIRE(static_cast<double>(distinct.size()) >= std::floor(r.migration_bytes / 0.05e9 / 2.0));
}

TEST_CASE("with an oracle predictor DIRECTOR's step latency is at most online reactive's on a drifting workload",
          "[slow]") {
  // Three seeds (three drifts and batch draws). Reactive re-optimises at the same moments for the batch
  // just served; the proactive oracle for the queued batch itself (the paper's Section III and Figure 3).
  for (const char* seed : {"run.seed=11", "run.seed=1", "run.seed=2"}) {
    INFO(seed);
    Timeline t1;
    Timeline t2;
    const auto proactive = run(director_sets({seed, "policy.rebalance.predictor=oracle"}), t1);
    const auto reactive = run(director_sets({seed, "policy.rebalance.mode=reactive"}), t2);
    REQUIRE(proactive.summary.requests_finished == 160);
    REQUIRE(reactive.summary.requests_finished == 160);
    // The same batches in the same order: the same steps, so mean step latency compares like with like.
    REQUIRE(proactive.summary.steps == reactive.summary.steps);
    CHECK(proactive.summary.mean_step_ms <= reactive.summary.mean_step_ms);
    // Where it comes from: the experts' loads are better balanced over the GPUs.
    CHECK(proactive.figure("gpu_load_std_tokens") < reactive.figure("gpu_load_std_tokens"));
    CHECK(proactive.summary.mean_straggler_gap_us < reactive.summary.mean_straggler_gap_us);
  }
}

TEST_CASE("DIRECTOR re-optimises before each queued batch, from that batch's predicted routing", "[slow]") {
  Timeline t;
  const auto r = run(director_sets({"policy.rebalance.predictor=oracle"}), t);
  const std::map<std::string, double> stats = stats_of(r);
  // 10 batches of 16: the first arrives to an idle group and is placed for before its first step; each
  // later one is queued while its predecessor runs, and is predicted and placed for once.
  CHECK(stats.at("reoptimisations") == 10.0);
  CHECK(r.rebalances <= 10);
  CHECK(r.rebalances >= 1);
  REQUIRE_FALSE(t.rebalances_ns.empty());
  CHECK(t.rebalances_ns.front() <= t.first_step_ns);  // decided before the first batch's first step
  // Without idle_start the first batch starts on the placement it finds: only the 9 queued ones.
  Timeline t2;
  const auto r2 = run(director_sets({"policy.rebalance.predictor=oracle", "policy.rebalance.idle_start=false"}), t2);
  CHECK(stats_of(r2).at("reoptimisations") == 9.0);
  REQUIRE_FALSE(t2.rebalances_ns.empty());
  CHECK(t2.rebalances_ns.front() > t2.first_step_ns);
}

TEST_CASE("DIRECTOR's predictor accuracy follows Table II for the model") {
  // The trigger each EP group gets, built from the run's own parts.
  const auto accuracy = [](const std::vector<std::string>& more) {
    const auto cfg = experiments::load_config(k_config, director_sets(more));
    const serving::SimulationParts p = experiments::build_simulation(cfg, experiments::profile_pool_windows(cfg));
    const auto trigger = p.pools.at(0).make_rebalance(0);
    const auto* director = dynamic_cast<const policies::DirectorTrigger*>(trigger.get());
    REQUIRE(director != nullptr);
    return director->options().accuracy;
  };
  REQUIRE(accuracy({"policy.rebalance.predictor=cascade"}) == 0.8462);  // DeepSeek-V2-Lite, cascade
  REQUIRE(accuracy({}) == 0.9568);                                      // the default: quantized
  REQUIRE(accuracy({"policy.rebalance.accuracy=0.5"}) == 0.5);
  REQUIRE_THROWS_WITH(experiments::load_config(k_config, director_sets({"policy.rebalance.predictor=magic"})),
                      Catch::Contains("policy.rebalance.predictor") && Catch::Contains("oracle, cascade, quantized"));
}
