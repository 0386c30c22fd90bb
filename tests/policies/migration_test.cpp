// Rebalancing moves only the experts whose slots change, from the nearest old holder; the periodic EPLB
// trigger re-solves on its window every interval.
#include <catch2/catch.hpp>

#include "policies/eplb_placement.hpp"
#include "policies/migration.hpp"
#include "policies/rebalance_trigger.hpp"

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
  PeriodicEplbTrigger trigger(shape, 2, 3);
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
  in.expert_load = {20, 18, 2, 2};
  REQUIRE(p->layers[0].phy2log == EplbPlacement().place(in).layers[0].phy2log);
  REQUIRE(p->layers[0].phy2log == std::vector<int>{0, 3, 1, 2});
}
