// SPDX-License-Identifier: Apache-2.0
// Variability-aware placements in a whole run (issue 7's scenario): GEM's high-variability setup, where
// one GPU is 12 % slow and routing is skewed. Balancing time instead of tokens must shorten the layers'
// straggler gap and the requests' end-to-end latency against both token-balancing baselines. And ViBE's
// drift-triggered recalibration must fire on a topic shift and stay quiet on a steady workload.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>

#include "experiments/assembly/build_simulation.hpp"
#include "experiments/assembly/experiment_config.hpp"

using namespace epsim;

namespace {
serving::SimulationResult run(const std::vector<std::string>& sets) {
  const auto cfg = experiments::load_config(std::string(EPSIM_TEST_DATA_DIR) + "/gem_scenario.toml", sets);
  return serving::Simulator(experiments::build_simulation(cfg, experiments::profile_pool_windows(cfg))).run();
}
}  // namespace

TEST_CASE("GEM and ViBE lower the straggler gap and E2E latency against linear and EPLB", "[slow]") {
  std::map<std::string, serving::RunSummary> s;
  for (const std::string p : {"linear", "eplb", "gem", "vibe"}) {
    const auto r = run({"policy.placement=\"" + p + "\""});
    REQUIRE(r.summary.requests_finished == 100);
    s[p] = r.summary;
    INFO(p << ": gap " << s[p].mean_straggler_gap_us << " us, e2e " << s[p].e2e_ms.mean << " ms");
    CHECK(true);
  }
  for (const std::string p : {"gem", "vibe"}) {
    for (const std::string base : {"linear", "eplb"}) {
      INFO(p << " vs " << base << ": gap " << s[p].mean_straggler_gap_us << " vs " << s[base].mean_straggler_gap_us
             << " us, e2e " << s[p].e2e_ms.mean << " vs " << s[base].e2e_ms.mean << " ms");
      REQUIRE(s[p].mean_straggler_gap_us < s[base].mean_straggler_gap_us);
      REQUIRE(s[p].e2e_ms.mean < s[base].e2e_ms.mean);
    }
  }
}

TEST_CASE("ViBE recalibrates after a topic shift, moving only swapped experts, and not on a steady workload") {
  // Two topics; every request is on topic 0 unless the mix shifts to topic 1 (from 3 s, over 1 s). The
  // steady run differs only in that no shift happens.
  const std::vector<std::string> common{
      "policy.placement=\"vibe\"", "policy.rebalance=\"drift\"",   "routing.topics=2",
      "routing.topic_spread=1.0",  "routing.topic_mix=[1.0, 0.0]", "routing.drift_target_mix=[0.0, 1.0]",
      "routing.drift_start_s=3.0", "routing.drift_duration_s=1.0"};
  const auto steady = run(common);
  REQUIRE(steady.summary.requests_finished == 100);
  REQUIRE(steady.rebalances == 0);
  REQUIRE(steady.expert_moves == 0);
  auto shift_sets = common;
  shift_sets.emplace_back("routing.drift=\"shift\"");
  const auto shifted = run(shift_sets);
  REQUIRE(shifted.summary.requests_finished == 100);
  REQUIRE(shifted.rebalances >= 1);
  REQUIRE(shifted.expert_moves > 0);
  std::map<std::string, double> stats;
  for (const policies::TriggerStat& st : shifted.trigger_stats) {
    stats[st.name] = st.value();
  }
  REQUIRE(stats.at("recalibrations") == static_cast<double>(shifted.rebalances));
  REQUIRE(stats.at("drift_detections") >= stats.at("recalibrations"));
  // Incremental: a few swaps per layer (the paper: 5-30), far from re-placing the 16 layers x 64 experts
  // each time (a full re-solve reassigns most of them: tests/policies/vibe_test.cpp).
  REQUIRE(shifted.expert_moves < shifted.rebalances * 16 * 64 / 4);
  REQUIRE(shifted.migration_bytes > 0.0);
}

TEST_CASE("the warm-up load window works under the port model and outlasts the run it profiles", "[slow]") {
  const auto r = run({"policy.placement=\"gem\"", "cluster.collective_model=\"ports\""});
  REQUIRE(r.summary.requests_finished == 100);
  // A generated arrival process serves the warm-up for as long as its window needs, past the run's own
  // 100 requests and its simulated time: a window after 500 ramp-up steps of a 2-s run.
  const auto long_warmup =
      run({"policy.placement=\"vibe\"", "policy.load_window_skip_steps=500", "run.max_sim_time_s=2"});
  // The run itself makes fewer steps than the 532 of the warm-up (so its window came from further arrivals).
  CHECK(long_warmup.summary.steps > 0);
  CHECK(long_warmup.summary.steps < 532);
}

TEST_CASE("the warm-up exists with fewer experts than GPUs: it replicates uniformly where linear cannot") {
  // Mixtral's 8 experts on EP16 with 8 redundant slots: linear cannot cover the GPUs, so the warm-up of
  // EPLB's load window serves with the replicated placement.
  const auto cfg = experiments::load_config_text(
      "[model]\npreset = \"mixtral-8x7b\"\n[cluster]\npreset = \"hgx-h100\"\nnodes = 2\n[workload]\nnum_requests = 60\n"
      "[parallel]\nredundant_experts = 8\n[policy]\nplacement = \"eplb\"\n",
      "ep16.toml", {});
  serving::Simulator sim(experiments::build_simulation(cfg, experiments::profile_pool_windows(cfg)));
  CHECK(sim.run().summary.requests_finished == 60);
}

TEST_CASE("periodic EPLB re-solves a run placed by biased EPLB with the biased variant") {
  // Mixtral's 8 experts on EP4 with 4 redundant slots (3 per GPU): ATOM's biased variant gives the
  // (4 redundant / 4 GPUs =) 1 hottest expert a replica on every GPU. The trigger each group gets from the
  // run's parts must re-solve with the run's variant, not fall back to the reference.
  const auto trigger_copies = [](const std::string& variant) {
    const auto cfg =
        experiments::load_config(std::string(EPSIM_TEST_DATA_DIR) + "/small.toml",
                                 {"policy.placement=\"eplb\"", "policy.placement_options.variant=\"" + variant + "\"",
                                  "parallel.redundant_experts=4", "policy.rebalance.trigger=\"periodic\"",
                                  "policy.rebalance.interval_steps=1", "policy.rebalance.window_steps=1"});
    const serving::SimulationParts p = experiments::build_simulation(cfg, experiments::profile_pool_windows(cfg));
    const auto trigger = p.pools.at(0).make_rebalance(0);
    // Loads 16, 15 and six of 10: the reference copies by the heaviest load per copy (16 -> 8, 15 -> 7.5,
    // then two of the 10s), so expert 0 gets 2 copies; biased puts it on all 4 GPUs.
    const int layers = static_cast<int>(cfg.model.num_moe_layers());
    std::vector<std::int32_t> loads(static_cast<std::size_t>(layers) * 8, 10);
    for (int l = 0; l < layers; ++l) {
      loads[static_cast<std::size_t>(l) * 8] = 16;
      loads[static_cast<std::size_t>(l) * 8 + 1] = 15;
    }
    const auto placed = trigger->on_step(policies::RebalanceView{0, loads, &p.pools.at(0).placement});
    REQUIRE(placed.has_value());
    const auto& phy2log = placed->layers[0].phy2log;
    return std::count(phy2log.begin(), phy2log.end(), 0);
  };
  CHECK(trigger_copies("biased") == 4);
  CHECK(trigger_copies("reference") == 2);
}
