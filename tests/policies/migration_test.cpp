// SPDX-License-Identifier: Apache-2.0
// Rebalancing moves only the experts whose slots change, from the nearest old holder; the periodic EPLB
// trigger re-solves on its window every interval.
#include <catch2/catch.hpp>

#include <toml++/toml.h>
#include "policies/eplb/eplb_placement.hpp"
#include "policies/migration.hpp"

#include "core/error.hpp"
#include "policies/eplb/periodic_eplb_trigger.hpp"
#include "policies/rebalance_config.hpp"
#include "policies/rebalance_trigger.hpp"
#include "policies/registry.hpp"

using namespace epsim::policies;

namespace {
Placement one_layer(int experts, int gpus, int slots, std::vector<int> phy2log) {
  Placement p;
  p.layers.push_back(make_layer_placement(experts, gpus, slots, std::move(phy2log)));
  return p;
}
}  // namespace

TEST_CASE("migration moves only changed experts, from the nearest old holder") {
  // [e0 e1 | e2 e3] -> [e0 e2 | e1 e3]: e2 comes to GPU 0 from GPU 1, e1 to GPU 1 from GPU 0.
  const auto moves = plan_migration(one_layer(4, 2, 2, {0, 1, 2, 3}), one_layer(4, 2, 2, {0, 2, 1, 3}), 2);
  REQUIRE(moves.size() == 2);
  REQUIRE((moves[0].expert == 2 && moves[0].from_gpu == 1 && moves[0].to_gpu == 0));
  REQUIRE((moves[1].expert == 1 && moves[1].from_gpu == 0 && moves[1].to_gpu == 1));
  // Same placement: nothing moves.
  REQUIRE(plan_migration(one_layer(4, 2, 2, {0, 1, 2, 3}), one_layer(4, 2, 2, {0, 1, 2, 3}), 2).empty());
  // A GPU that already holds the expert copies it locally: [e0 e1 | e2 e0] -> [e0 e0 | e2 e1] moves only e1.
  const auto local = plan_migration(one_layer(3, 2, 2, {0, 1, 2, 0}), one_layer(3, 2, 2, {0, 0, 2, 1}), 2);
  REQUIRE(local.size() == 1);
  REQUIRE((local[0].expert == 1 && local[0].from_gpu == 0 && local[0].to_gpu == 1));
  // Nearest source: e0 lives on GPU 1 (node 0) and GPU 2 (node 1); GPU 3 (node 1) takes it from GPU 2.
  const auto near =
      plan_migration(one_layer(4, 4, 2, {1, -1, 0, 2, 0, 3, 3, -1}), one_layer(4, 4, 2, {1, -1, 0, 2, 0, 3, 3, 0}), 2);
  REQUIRE(near.size() == 1);
  REQUIRE(near[0].from_gpu == 2);
  REQUIRE(near[0].to_gpu == 3);
}

TEST_CASE("the periodic EPLB trigger re-solves every interval on its window") {
  PlacementInput shape = PlacementInput::shape(1, 4, 2, 1, 2, 1);
  PeriodicEplbTrigger trigger(shape, PeriodicEplbOptions{2, 3});
  const Placement current = one_layer(4, 2, 2, {0, 1, 2, 3});
  // Loads: experts 0 and 1 hot. Steps 1 and 2: nothing; step 3: EPLB on the last 2 steps.
  const std::vector<std::int32_t> hot{10, 9, 1, 1};
  const std::vector<std::int32_t> other{0, 0, 0, 0};
  REQUIRE_FALSE(trigger.on_step(RebalanceView{0, other, &current}));
  REQUIRE_FALSE(trigger.on_step(RebalanceView{1, hot, &current}));
  const auto p = trigger.on_step(RebalanceView{2, hot, &current});
  REQUIRE(p.has_value());
  // Window = the last 2 steps: loads 20, 18, 2, 2 -> EPLB (global, 2 GPUs of 2 slots) pairs a hot expert
  // with a cold one on each GPU.
  PlacementInput in = shape;
  in.set_load_window({20, 18, 2, 2});
  REQUIRE(p->layers[0].phy2log == EplbPlacement().place(in).layers[0].phy2log);
  REQUIRE(p->layers[0].phy2log == std::vector<int>{0, 3, 1, 2});
}

TEST_CASE("the periodic EPLB trigger re-solves with the run's EPLB variant when it is given one") {
  // eplb_test.cpp's hand case: 4 experts on 2 GPUs of 3 slots, loads 10, 1, 5, 2. ATOM's biased variant puts
  // the hottest (expert 0) on both GPUs: phy2log {0, 2, 3, 0, 2, 1}; the reference replicates by load.
  const PlacementInput shape = PlacementInput::shape(1, 4, 2, 1, 3, 1);
  const Placement current = one_layer(4, 2, 3, {0, 1, 2, 3, 0, 1});
  const std::vector<std::int32_t> loads{10, 1, 5, 2};
  PeriodicEplbTrigger biased(shape, PeriodicEplbOptions{1, 1}, std::make_unique<EplbPlacement>(EplbVariant::biased));
  const auto b = biased.on_step(RebalanceView{0, loads, &current});
  REQUIRE(b.has_value());
  REQUIRE(b->layers[0].phy2log == std::vector<int>{0, 2, 3, 0, 2, 1});
  PeriodicEplbTrigger reference(shape, PeriodicEplbOptions{1, 1});
  const auto r = reference.on_step(RebalanceView{0, loads, &current});
  REQUIRE(r.has_value());
  PlacementInput in = shape;
  in.set_load_window({10, 1, 5, 2});
  REQUIRE(r->layers[0].phy2log == EplbPlacement().place(in).layers[0].phy2log);
  REQUIRE(r->layers[0].phy2log != b->layers[0].phy2log);
  // Through the registry's factory: the context's run_eplb is what each solve runs.
  TriggerContext ctx;
  ctx.group = shape;
  ctx.run_eplb = [] { return std::make_unique<EplbPlacement>(EplbVariant::biased); };
  const toml::table table = toml::parse("interval_steps = 1\nwindow_steps = 1\n");
  epsim::core::ParamTable opts({epsim::core::ParamLayer{&table, "t.toml"}}, "policy.rebalance");
  const auto factory = periodic_eplb_trigger_entry().make(opts);
  const auto made = factory->make(ctx, 0)->on_step(RebalanceView{0, loads, &current});
  REQUIRE(made.has_value());
  REQUIRE(made->layers[0].phy2log == b->layers[0].phy2log);
}

TEST_CASE("triggers are a registry: [policy.rebalance] names one, its options are its own, typed") {
  const auto parse = [](std::string_view text) {
    static std::vector<std::unique_ptr<toml::table>> keep;  // the tables outlive the returned config
    keep.push_back(std::make_unique<toml::table>(toml::parse(text)));
    epsim::core::ParamTable policy({epsim::core::ParamLayer{keep.back().get(), "t.toml"}}, "policy");
    return parse_rebalance(policy);
  };
  // None: no factory, static placement.
  const RebalanceConfig none = parse("");
  REQUIRE(none.trigger == nullptr);
  REQUIRE(none.trigger_name == "none");
  // The shorthand and the table say the same; the options reach the trigger's own parser.
  const RebalanceConfig shorthand = parse("rebalance = \"periodic\"\n");
  REQUIRE(shorthand.trigger != nullptr);
  REQUIRE(shorthand.migration == MigrationMode::stop_the_world);
  const RebalanceConfig table = parse("[rebalance]\ntrigger = \"periodic\"\ninterval_steps = 3\nwindow_steps = 2\n");
  // A factory's trigger behaves as the directly built one with those options (re-solves at step 3).
  TriggerContext ctx;
  ctx.group = PlacementInput::shape(1, 4, 2, 1, 2, 1);
  auto trigger = table.trigger->make(ctx, 0);
  const Placement current = one_layer(4, 2, 2, {0, 1, 2, 3});
  const std::vector<std::int32_t> hot{10, 9, 1, 1};
  REQUIRE_FALSE(trigger->on_step(RebalanceView{0, hot, &current}));
  REQUIRE_FALSE(trigger->on_step(RebalanceView{1, hot, &current}));
  REQUIRE(trigger->on_step(RebalanceView{2, hot, &current}).has_value());
  // DIRECTOR declares curves, a load window and (proactive) forecasts, and migrates in compute phases.
  const RebalanceConfig director = parse("[rebalance]\ntrigger = \"director\"\n");
  REQUIRE(director.trigger->needs() == PolicyNeeds{.load_window = true, .cost_curves = true, .predictions = true});
  REQUIRE(director.migration == MigrationMode::compute_phases);
  const RebalanceConfig reactive =
      parse("[rebalance]\ntrigger = \"director\"\nmode = \"reactive\"\nmigration = \"overlapped\"\n");
  REQUIRE_FALSE(reactive.trigger->needs().predictions);
  REQUIRE(reactive.migration == MigrationMode::overlapped);
  // Errors name the key and the valid values: an unknown trigger, another trigger's option.
  REQUIRE_THROWS_WITH(parse("rebalance = \"sometimes\"\n"), Catch::Contains("policy.rebalance.trigger") &&
                                                                Catch::Contains("none, periodic, drift, director"));
  REQUIRE_THROWS_WITH(parse("[rebalance]\ntrigger = \"periodic\"\nthreshold = 0.1\n"),
                      Catch::Contains("policy.rebalance.threshold: unknown key"));
  REQUIRE_THROWS_WITH(parse("rebalance = 3\n"), Catch::Contains("expected a table (or the trigger as a string)"));
}

TEST_CASE("trigger statistics pool over EP groups: totals add, means weigh by their counts") {
  TriggerStat solves = TriggerStat::total("reoptimisations", 2.0);
  solves.pool(TriggerStat::total("reoptimisations", 3.0));
  REQUIRE(solves.value() == 5.0);
  // Group 1: gaps 1.2 and 1.4 over 2 solves; group 2: 2.0 over 1: the mean of the three is 4.6 / 3.
  TriggerStat gap = TriggerStat::mean("lp_gap_mean", 2.6, 2.0);
  gap.pool(TriggerStat::mean("lp_gap_mean", 2.0, 1.0));
  REQUIRE(gap.value() == Approx(4.6 / 3.0));
  REQUIRE(TriggerStat::mean("empty", 0.0, 0.0).value() == 0.0);
}
