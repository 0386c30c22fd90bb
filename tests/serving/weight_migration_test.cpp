// SPDX-License-Identifier: Apache-2.0
// Weight migration modes timed by hand on a 2-GPU NVSwitch node at the links' full rate: 1 us of latency,
// then 450 B/ns out of each GPU (shared max-min fair by the transfers leaving it).
#include <toml++/toml.h>
#include <catch2/catch.hpp>

#include "core/event_queue.hpp"
#include "core/params.hpp"
#include "hardware/cluster_spec.hpp"
#include "hardware/network_graph.hpp"
#include "hardware/transfer_network.hpp"
#include "policies/placement.hpp"
#include "sim/weight_migration.hpp"

using namespace epsim;

namespace {

hardware::ClusterSpec two_gpu_node() {
  const toml::table over = toml::parse("nodes = 1\ngpus_per_node = 2\nintra_node.efficiency = 1.0");
  core::ParamTable t({core::ParamLayer{&over, "test"},
                      core::ParamLayer{&hardware::cluster_presets().get("hgx-h100", "", ""), "hgx-h100"}},
                     "cluster");
  return hardware::parse_cluster_spec(t);
}

// Two layers of two experts on two GPUs, one slot each: `swapped` puts expert 1 on GPU 0.
policies::Placement placement(bool layer0_swapped, bool layer1_swapped) {
  policies::Placement p;
  for (const bool swapped : {layer0_swapped, layer1_swapped}) {
    p.layers.push_back(
        policies::make_layer_placement(2, 2, 1, swapped ? std::vector<int>{1, 0} : std::vector<int>{0, 1}));
  }
  return p;
}

struct Intervals : serving::Observer {
  std::vector<std::pair<core::Time, core::Time>> seen;
  std::vector<double> bytes;
  void on_migration(int /*group*/, core::Time start_ns, core::Time end_ns, double b) override {
    seen.emplace_back(start_ns, end_ns);
    bytes.push_back(b);
  }
};

}  // namespace

TEST_CASE("layer by layer migration switches each layer when its experts land and never stalls") {
  const hardware::ClusterSpec spec = two_gpu_node();
  const hardware::NetworkGraph graph(spec);
  const hardware::Topology topo(1, 2, spec.scale_up_link, spec.nic_link);
  constexpr double k_bytes = 100e6;
  // One layer's swap: two 100 MB transfers in opposite directions, each alone on its GPU's port:
  // 1,000 ns of latency + 100e6 / 450 = 222,222.2 ns, rounded up.
  constexpr core::Time k_layer_ns = 1000 + 222223;

  SECTION("layer_by_layer: layer 0 first, then layer 1 from the moment layer 0 landed") {
    core::Engine engine;
    hardware::TransferNetwork net(engine, graph);
    serving::WeightMigration mig(engine, &net, {policies::MigrationMode::layer_by_layer, 0.0, k_bytes});
    Intervals obs;
    std::vector<serving::Observer*> observers{&obs};
    serving::GroupMigration m;
    policies::Placement current = placement(false, false);
    bool resumed = false;
    mig.start(m, current, placement(true, true), 0, 0, topo, observers, [&] { resumed = true; });
    REQUIRE(m.active());
    REQUIRE_FALSE(m.paused);
    engine.run_until(k_layer_ns);
    REQUIRE(current.layers[0].phy2log == std::vector<int>{1, 0});  // layer 0 switched
    REQUIRE(current.layers[1].phy2log == std::vector<int>{0, 1});  // layer 1 still moving
    REQUIRE(m.active());
    engine.run();
    REQUIRE(current.layers[1].phy2log == std::vector<int>{1, 0});
    REQUIRE(current.layers[1].logcnt == std::vector<int>{1, 1});
    REQUIRE_FALSE(m.active());
    REQUIRE_FALSE(resumed);  // serving never stopped
    REQUIRE(obs.seen == std::vector<std::pair<core::Time, core::Time>>{{0, k_layer_ns}, {k_layer_ns, 2 * k_layer_ns}});
    REQUIRE(obs.bytes == std::vector<double>{2 * k_bytes, 2 * k_bytes});
    REQUIRE(mig.expert_moves() == 4);
    REQUIRE(mig.stall_ns() == 0.0);
  }

  SECTION("a layer without moves switches with its neighbours, and no moves at all is immediate") {
    core::Engine engine;
    hardware::TransferNetwork net(engine, graph);
    serving::WeightMigration mig(engine, &net, {policies::MigrationMode::layer_by_layer, 0.0, k_bytes});
    serving::GroupMigration m;
    policies::Placement current = placement(false, false);
    mig.start(m, current, placement(false, true), 0, 0, topo, {}, [] {});
    engine.run();
    REQUIRE(engine.now() == k_layer_ns);  // only layer 1 moved
    REQUIRE(current.layers[1].phy2log == std::vector<int>{1, 0});
    REQUIRE_FALSE(m.active());
    mig.start(m, current, placement(false, true), 0, 0, topo, {}, [] {});
    REQUIRE_FALSE(m.active());
    REQUIRE(mig.rebalances() == 2);
    REQUIRE(mig.expert_moves() == 2);
  }

  SECTION("overlapped: all four transfers at once share the ports, both layers switch together") {
    core::Engine engine;
    hardware::TransferNetwork net(engine, graph);
    serving::WeightMigration mig(engine, &net, {policies::MigrationMode::overlapped, 0.0, k_bytes});
    serving::GroupMigration m;
    policies::Placement current = placement(false, false);
    mig.start(m, current, placement(true, true), 0, 0, topo, {}, [] {});
    // Two flows leave each GPU at 225 B/ns: 200e6 / 450 = 444,444.4 ns after the latency.
    engine.run_until(1000 + 444444);
    REQUIRE(current.layers[0].phy2log == std::vector<int>{0, 1});
    engine.run();
    REQUIRE(engine.now() == 1000 + 444445);
    REQUIRE(current.layers[0].phy2log == std::vector<int>{1, 0});
    REQUIRE(current.layers[1].phy2log == std::vector<int>{1, 0});
  }

  SECTION("stop the world: the group pauses until the last lands and the stall is the whole migration") {
    core::Engine engine;
    hardware::TransferNetwork net(engine, graph);
    serving::WeightMigration mig(engine, &net, {policies::MigrationMode::stop_the_world, 0.0, k_bytes});
    serving::GroupMigration m;
    policies::Placement current = placement(false, false);
    bool resumed = false;
    mig.start(m, current, placement(true, true), 0, 0, topo, {}, [&] { resumed = true; });
    REQUIRE(m.paused);
    engine.run();
    REQUIRE(resumed);
    REQUIRE(mig.stall_ns() == 1000 + 444445);
  }

  SECTION("a fixed time per moved layer follows the transfers: in the stall, and before each layer switches") {
    constexpr double k_overhead_ns = 5e6;  // 5 ms per layer
    core::Engine engine;
    hardware::TransferNetwork net(engine, graph);
    serving::WeightMigration stw(engine, &net, {policies::MigrationMode::stop_the_world, 0.0, k_bytes, k_overhead_ns});
    serving::GroupMigration m;
    policies::Placement current = placement(false, false);
    stw.start(m, current, placement(true, true), 0, 0, topo, {}, [] {});
    engine.run();
    REQUIRE(stw.stall_ns() == 1000 + 444445 + 2 * 5000000);  // two layers moved

    core::Engine engine2;
    hardware::TransferNetwork net2(engine2, graph);
    serving::WeightMigration lbl(engine2, &net2,
                                 {policies::MigrationMode::layer_by_layer, 0.0, k_bytes, k_overhead_ns});
    Intervals obs;
    std::vector<serving::Observer*> observers{&obs};
    serving::GroupMigration m2;
    policies::Placement current2 = placement(false, false);
    lbl.start(m2, current2, placement(true, true), 0, 0, topo, observers, [] {});
    engine2.run();
    constexpr core::Time k_first = k_layer_ns + 5000000;
    REQUIRE(obs.seen == std::vector<std::pair<core::Time, core::Time>>{{0, k_first}, {k_first, 2 * k_first}});
    REQUIRE(lbl.stall_ns() == 0.0);
  }

  SECTION("chunked: a chunk of layers stops the group, the next waits for a step boundary") {
    core::Engine engine;
    hardware::TransferNetwork net(engine, graph);
    serving::MigrationSettings one_layer{policies::MigrationMode::chunked, 0.0, k_bytes};
    one_layer.layers_per_chunk = 1;
    serving::WeightMigration mig(engine, &net, one_layer);
    serving::GroupMigration m;
    policies::Placement current = placement(false, false);
    int resumed = 0;
    mig.start(m, current, placement(true, true), 0, 0, topo, {}, [&] { ++resumed; });
    REQUIRE(m.paused);
    engine.run();
    REQUIRE(engine.now() == k_layer_ns);  // layer 0's swap alone
    REQUIRE_FALSE(m.paused);
    REQUIRE(resumed == 1);
    REQUIRE(m.chunk_waiting);
    REQUIRE(current.layers[0].phy2log == std::vector<int>{1, 0});
    REQUIRE(current.layers[1].phy2log == std::vector<int>{0, 1});
    // A step of 5 us is served; at its end the next chunk stops the group again.
    engine.run_until(k_layer_ns + 5000);
    mig.next_chunk(m, current, 0, 0, {});
    REQUIRE(m.paused);
    engine.run();
    REQUIRE(current.layers[1].phy2log == std::vector<int>{1, 0});
    REQUIRE_FALSE(m.active());
    REQUIRE(resumed == 2);
    REQUIRE(mig.stall_ns() == 2 * k_layer_ns);
  }

  SECTION("chunked with every layer in one chunk is stop the world") {
    core::Engine engine;
    hardware::TransferNetwork net(engine, graph);
    serving::MigrationSettings all{policies::MigrationMode::chunked, 0.0, k_bytes};
    all.layers_per_chunk = 2;
    serving::WeightMigration mig(engine, &net, all);
    serving::GroupMigration m;
    policies::Placement current = placement(false, false);
    mig.start(m, current, placement(true, true), 0, 0, topo, {}, [] {});
    engine.run();
    REQUIRE_FALSE(m.active());
    REQUIRE(mig.stall_ns() == 1000 + 444445);
  }
}
