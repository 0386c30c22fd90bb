// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <catch2/catch.hpp>
#include <numeric>
#include <random>

#include "core/error.hpp"
#include "policies/even_routing.hpp"
#include "policies/linear_placement.hpp"
#include "policies/registry.hpp"
#include "policies/replicated_placement.hpp"

using namespace epsim::policies;

TEST_CASE("linear placement: expert e of E on N GPUs goes to GPU floor(e / (E / N))") {
  LinearPlacement lin;
  const Placement p = lin.place(PlacementInput::shape(3, 8, 4, 1, 2, 1));
  REQUIRE(p.layers.size() == 3);
  for (const auto& l : p.layers) {
    REQUIRE(l.phy2log == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
    for (int e = 0; e < 8; ++e) {
      REQUIRE(l.logcnt[static_cast<std::size_t>(e)] == 1);
      REQUIRE(l.gpu_of_slot(l.replicas(e)[0]) == e / 2);
    }
  }
}

TEST_CASE("linear placement leaves redundant slots empty and splits unevenly when it must") {
  LinearPlacement lin;
  const Placement p = lin.place(PlacementInput::shape(1, 4, 2, 1, 3, 1));
  REQUIRE(p.layers[0].phy2log == std::vector<int>{0, 1, -1, 2, 3, -1});
  // 6 experts on 4 GPUs: GPU floor(e * 4 / 6) = 0, 0, 1, 2, 2, 3.
  const Placement uneven = lin.place(PlacementInput::shape(1, 6, 4, 1, 2, 1));
  REQUIRE(uneven.layers[0].phy2log == std::vector<int>{0, 1, 2, -1, 3, 4, 5, -1});
  REQUIRE_THROWS_WITH(lin.place(PlacementInput::shape(1, 6, 4, 1, 1, 1)),
                      Catch::Contains("2 experts on a GPU need that many slots"));
}

TEST_CASE("replicated placement: slot s holds expert s mod E, at any EP size") {
  ReplicatedPlacement rep;
  // 4 experts on 8 GPUs of 1 slot: GPUs 0-3 and 4-7 each hold every expert once.
  const Placement wide = rep.place(PlacementInput::shape(2, 4, 8, 1, 1, 1));
  REQUIRE(wide.layers.size() == 2);
  CHECK(wide.layers[1].phy2log == std::vector<int>{0, 1, 2, 3, 0, 1, 2, 3});
  CHECK(wide.layers[0].logcnt == std::vector<int>{2, 2, 2, 2});
  // 6 experts in 2 GPUs x 4 slots: 8 slots, experts 0 and 1 twice.
  const Placement p = rep.place(PlacementInput::shape(1, 6, 2, 1, 4, 1));
  CHECK(p.layers[0].phy2log == std::vector<int>{0, 1, 2, 3, 4, 5, 0, 1});
  CHECK(p.layers[0].logcnt == std::vector<int>{2, 2, 1, 1, 1, 1});
  CHECK_THROWS_WITH(rep.place(PlacementInput::shape(1, 9, 2, 1, 4, 1)), Catch::Contains("8 slots cannot hold all 9"));
}

TEST_CASE("log2phy is the inverse of phy2log, replica ranks in slot order") {
  const LayerPlacement l = make_layer_placement(3, 2, 3, {0, 1, 2, 2, 0, 2});
  REQUIRE(l.logcnt == std::vector<int>{2, 1, 3});
  REQUIRE(l.max_replicas == 3);
  REQUIRE(l.log2phy == std::vector<int>{0, 4, -1, 1, -1, -1, 2, 3, 5});
  REQUIRE_THROWS_WITH(make_layer_placement(4, 2, 2, {0, 1, 2, 2}), Catch::Contains("expert 3 has no replica"));
}

TEST_CASE("even routing splits over replicas, remainders to the lowest ranks") {
  const LayerPlacement l = make_layer_placement(3, 2, 3, {0, 1, 2, 2, 0, 2});
  EvenRouting even;
  RoutedLoad out{std::vector<std::int32_t>(6, -1)};
  const std::vector<std::int32_t> load{7, 5, 10};
  even.route(StepLayerLoad{load}, l, out);
  // expert 0 (slots 0, 4): 4, 3; expert 1 (slot 1): 5; expert 2 (slots 2, 3, 5): 4, 3, 3.
  REQUIRE(out.slot_tokens == std::vector<std::int32_t>{4, 5, 4, 3, 3, 3});
}

TEST_CASE("even routing with one replica an expert puts each expert's tokens on its slot") {
  // Shuffled bijections (the gather path), then the same with an empty slot (the general path): every
  // slot gets its expert's tokens, an empty slot none, whatever the slot held before.
  std::mt19937 shuffle(3);
  for (int trial = 0; trial < 50; ++trial) {
    const int experts = 8 + trial % 5;
    const bool empty_slot = trial % 2 == 1;
    std::vector<int> phy2log(static_cast<std::size_t>(experts));
    std::iota(phy2log.begin(), phy2log.end(), 0);
    if (empty_slot) {
      phy2log.push_back(-1);
    }
    std::shuffle(phy2log.begin(), phy2log.end(), shuffle);
    const int slots = static_cast<int>(phy2log.size());
    const int gpus = slots % 2 == 0 ? 2 : 1;
    const LayerPlacement l = make_layer_placement(experts, gpus, slots / gpus, phy2log);
    std::vector<std::int32_t> load(static_cast<std::size_t>(experts));
    for (int e = 0; e < experts; ++e) {
      load[static_cast<std::size_t>(e)] = 3 * e + trial;
    }
    RoutedLoad out{std::vector<std::int32_t>(static_cast<std::size_t>(slots), -7)};
    EvenRouting().route(StepLayerLoad{load}, l, out);
    for (int s = 0; s < slots; ++s) {
      const int e = phy2log[static_cast<std::size_t>(s)];
      CHECK(out.slot_tokens[static_cast<std::size_t>(s)] == (e < 0 ? 0 : load[static_cast<std::size_t>(e)]));
    }
  }
}

TEST_CASE("registries list their policies and reject unknown names with the valid ones") {
  REQUIRE(placement_registry().find("linear") != nullptr);
  REQUIRE(routing_registry().find("even") != nullptr);
  const std::string msg = placement_registry().unknown_message("gem2");
  REQUIRE_THAT(msg, Catch::StartsWith("unknown placement policy \"gem2\"; valid values are: "));
  REQUIRE_THAT(msg, Catch::Contains("linear"));
  REQUIRE(placement_registry().unknown_message("linear").empty());
  epsim::core::ParamTable t(std::string("x"));
  REQUIRE_THROWS_AS(routing_registry().create("nope", t), epsim::core::Error);
}
