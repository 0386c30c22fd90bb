// SPDX-License-Identifier: Apache-2.0
// The cluster graph (paths in the presets), graph-exact collective costs checked by hand, the port model
// equal to the graph on rank-1 traffic over switch + rail fabrics, and link-sharing transfers.
#include <fmt/format.h>
#include <toml++/toml.h>
#include <boost/random/uniform_real_distribution.hpp>
#include <catch2/catch.hpp>

#include "core/random_streams.hpp"
#include "hardware/all_to_all.hpp"
#include "hardware/cluster_spec.hpp"
#include "hardware/collectives.hpp"
#include "hardware/network_graph.hpp"
#include "hardware/transfer_network.hpp"

using namespace epsim;
using namespace epsim::hardware;

namespace {

ClusterSpec cluster(const std::string& preset, std::string_view overrides = "") {
  const toml::table over = toml::parse(overrides);
  core::ParamTable t(
      {core::ParamLayer{&over, "test"}, core::ParamLayer{&cluster_presets().get(preset, "", ""), preset}}, "cluster");
  return parse_cluster_spec(t);
}

}  // namespace

TEST_CASE("path lengths and latencies in the NVL72 and 2-node HGX presets") {
  const NetworkGraph nvl(cluster("gb200-nvl72", "nodes = 1"));
  REQUIRE(nvl.num_gpus() == 72);
  REQUIRE(nvl.path(0, 71).size() == 2);  // GPU -> NVLink switch -> GPU
  REQUIRE(nvl.path_latency_ns(0, 71) == Approx(1000.0));
  REQUIRE(nvl.path(5, 5).empty());

  const NetworkGraph hgx(cluster("hgx-h200", "nodes = 2"));
  REQUIRE(hgx.num_gpus() == 16);
  REQUIRE(hgx.path(0, 7).size() == 2);                   // inside a node: NVSwitch
  REQUIRE(hgx.path(0, 8).size() == 4);                   // same rail: GPU -> NIC -> leaf -> NIC -> GPU
  REQUIRE(hgx.path(0, 9).size() == 6);                   // across rails: ... leaf -> spine -> leaf ...
  REQUIRE(hgx.path_latency_ns(0, 8) == Approx(4000.0));  // PCIe 5 (1 us) x 2 + NDR (1 us) x 2
  REQUIRE(hgx.path_latency_ns(0, 9) == Approx(6000.0));
  // Routes never pass through another GPU.
  for (int s = 0; s < 16; ++s) {
    for (int d = 0; d < 16; ++d) {
      const auto p = hgx.path(s, d);
      for (std::size_t i = 0; i + 1 < p.size(); ++i) {
        REQUIRE(hgx.vertex(hgx.arc(p[i]).to).kind != VertexKind::gpu);
      }
    }
  }
  const NetworkGraph mesh(cluster("mi300x-8", "nodes = 1"));
  REQUIRE(mesh.path(0, 5).size() == 1);  // Infinity Fabric: a direct link per pair
  const NetworkGraph pcie(cluster("rtx4090-pcie", "nodes = 2"));
  REQUIRE(pcie.path(0, 1).size() == 2);  // through the host
  REQUIRE(pcie.path(0, 8).size() == 6);  // GPU -> host -> NIC -> leaf -> NIC -> host -> GPU
}

TEST_CASE("uniform all-to-all on 2 HGX nodes of 2 GPUs: the NIC link decides (by hand)") {
  const NetworkGraph g(cluster("hgx-h100", "nodes = 2\ngpus_per_node = 2"));
  CollectiveCoster coster(g);
  // 1 MB between every pair. GPU -> NVSwitch carries 1 MB (2.7 us at 450 x 0.82 GB/s achieved); GPU -> NIC
  // 2 MB (31.7 us at 63 GB/s); NIC -> leaf 2 MB (42.6 us at 50 x 0.94 GB/s achieved); leaf -> spine 2 MB at
  // 2 x 47 GB/s (21.3 us). The collective: 5 us overhead + 6 us (longest route) + 42.6 us.
  Eigen::MatrixXd m = Eigen::MatrixXd::Constant(4, 4, 1e6);
  const auto c = coster.cost(m);
  REQUIRE(c.time_ns == Approx(5000.0 + 6000.0 + 2e6 / (50.0 * 0.94)));
  REQUIRE(c.intra_bytes == Approx(4e6));
  REQUIRE(c.inter_bytes == Approx(8e6));
  const auto& bottleneck = g.arc(coster.bottleneck_arc());
  REQUIRE(g.vertex(bottleneck.from).kind == VertexKind::nic);
  REQUIRE(g.vertex(bottleneck.to).kind == VertexKind::leaf);
}

TEST_CASE("skewed all-to-all: the most loaded link decides, inside a node NVLink dominates") {
  const NetworkGraph g(cluster("hgx-h100", "nodes = 2\ngpus_per_node = 2"));
  CollectiveCoster coster(g);
  Eigen::MatrixXd m = Eigen::MatrixXd::Zero(4, 4);
  m(0, 1) = 45e6;  // 122 us over NVLink at 450 x 0.82 GB/s
  m(0, 2) = 1e6;   // 21 us over the NIC at 50 x 0.94 GB/s
  REQUIRE(coster.cost(m).time_ns == Approx(5000.0 + 4000.0 + 45e6 / (450.0 * 0.82)));
  // Inter-node bottleneck: 3 GPUs send 1 MB each to GPU 3; GPU 3's leaf -> NIC link carries the 2 MB
  // from the other node (42.6 us at 47 GB/s achieved), its NVSwitch port only 1 MB.
  Eigen::MatrixXd r = Eigen::MatrixXd::Zero(4, 4);
  r(0, 3) = 1e6;
  r(1, 3) = 1e6;
  r(2, 3) = 1e6;
  REQUIRE(coster.cost(r).time_ns == Approx(5000.0 + 6000.0 + 2e6 / (50.0 * 0.94)));
  // A full mesh has one link per pair: 6.4 MB to one peer takes 133 us at 64 x 0.75 GB/s (AMD's usable
  // 48 GB/s per xGMI link), however idle the rest.
  const NetworkGraph mesh(cluster("mi300x-8", "nodes = 1"));
  CollectiveCoster mc(mesh);
  Eigen::MatrixXd x = Eigen::MatrixXd::Zero(8, 8);
  x(0, 1) = 6.4e6;
  REQUIRE(mc.cost(x).time_ns == Approx(5000.0 + 700.0 + 6.4e6 / (64.0 * 0.75)));
}

TEST_CASE("the port model equals the graph on the engine's rank-1 dispatch traffic (switch + rail)") {
  const NetworkGraph g(cluster("hgx-h200", "nodes = 2"));
  CollectiveCoster coster(g);
  const Topology ports = g.port_view();
  core::Rng rng(4);
  boost::random::uniform_real_distribution<double> u(0.0, 1.0);
  for (int trial = 0; trial < 20; ++trial) {
    Eigen::ArrayXd share(16);
    Eigen::ArrayXd pairs(16);
    for (int i = 0; i < 16; ++i) {
      share(i) = u(rng);
      pairs(i) = 1000.0 * u(rng);
    }
    share /= share.sum();
    const double bytes = 7168 * 2;
    const Eigen::MatrixXd m = (share * bytes).matrix() * pairs.matrix().transpose();
    PerGpuTraffic t;
    t.resize(16);
    for (int s = 0; s < 16; ++s) {
      for (int d = 0; d < 16; ++d) {
        if (s == d) {
          continue;
        }
        const bool intra = ports.node_of(s) == ports.node_of(d);
        (intra ? t.send_intra : t.send_inter)(s) += m(s, d);
        (intra ? t.recv_intra : t.recv_inter)(d) += m(s, d);
      }
    }
    REQUIRE(all_to_all_cost(ports, t).time_ns == Approx(coster.cost(m).time_ns).epsilon(1e-9));
  }
}

TEST_CASE("all-gather and all-reduce traffic") {
  Eigen::ArrayXd b(3);
  b << 1.0, 2.0, 3.0;
  const Eigen::MatrixXd ag = all_gather_traffic(b);
  REQUIRE(ag(0, 1) == 1.0);
  REQUIRE(ag(2, 0) == 3.0);
  REQUIRE(ag(1, 1) == 0.0);
  // Ring all-reduce volume: each GPU sends 2 (n - 1) / n x bytes.
  const Eigen::MatrixXd ar = all_reduce_traffic(4, 8e6);
  REQUIRE(ar.row(0).sum() == Approx(2.0 * 3.0 / 4.0 * 8e6));
}

TEST_CASE("overlapping transfers share the links they cross (max-min fair), by hand") {
  // Links at their full signalling rate, so the hand values stay round.
  const NetworkGraph g(cluster("hgx-h100",
                               "nodes = 2\ngpus_per_node = 2\nintra_node.efficiency = 1.0\n"
                               "inter_node.efficiency = 1.0"));
  core::Engine engine;
  TransferNetwork net(engine, g);
  core::Time a_done = -1;
  core::Time b_done = -1;
  // A: GPU 0 -> GPU 2 (same rail, 4 us latency), B: GPU 0 -> GPU 3 (cross rail, 6 us); both leave through
  // NIC 0 -> leaf 0 (50 GB/s). A runs alone at 50 B/ns from 4 us to 6 us (100 kB), then both at 25 B/ns:
  // A's remaining 99.9 MB end at 6 us + 3996 us; B then has 100 kB left at 50 B/ns: 2 us more.
  net.start(0, 2, 100e6, [&](core::Time t) { a_done = t; });
  net.start(0, 3, 100e6, [&](core::Time t) { b_done = t; });
  engine.run_until(5000);
  REQUIRE(net.rates() == std::vector<double>{50.0});
  engine.run_until(7000);
  REQUIRE(net.rates() == std::vector<double>{25.0, 25.0});
  engine.run();
  REQUIRE(a_done == 4002000);
  REQUIRE(b_done == 4004000);
  REQUIRE(net.bytes_delivered() == Approx(200e6));
  REQUIRE(net.active() == 0);
  // A lone NVLink transfer: 1 us of latency, then 100 MB at 450 B/ns (222222.2 ns, rounded up).
  core::Time c_done = -1;
  net.start(0, 1, 100e6, [&](core::Time t) { c_done = t; });
  engine.run();
  REQUIRE(c_done == 4004000 + 1000 + 222223);
}

TEST_CASE("a graph keeps the routes asked for: memory grows with GPUs, not GPUs squared") {
  // Every EP group of 8 prepared, as a run on the graph model does, then each group's pairs read:
  // exactly groups x 8 x 8 routes are kept (before: the first path() made all GPUs^2 of them).
  const auto kept_for = [](int nodes) {
    const NetworkGraph g(cluster("hgx-h200", fmt::format("nodes = {}", nodes)));
    for (int first = 0; first < g.num_gpus(); first += 8) {
      g.prepare_routes(first, 8);
    }
    REQUIRE(g.path(3, 5).size() == 2);  // kept already: reading adds nothing
    REQUIRE(g.routes_kept() == static_cast<std::size_t>(nodes) * 64);
    return g.routes_kept();
  };
  const std::size_t at_n = kept_for(32);
  REQUIRE(kept_for(64) == 2 * at_n);  // 2x the GPUs: 2x the routes (GPUs squared would be 4x)
  // A lone cross-node path() keeps that one route; a transfer's route costs one, not a row.
  const NetworkGraph g(cluster("hgx-h200", "nodes = 64"));
  REQUIRE(g.routes_kept() == 0);
  REQUIRE(g.path(0, 511).size() == 6);  // rail 0 to rail 7: GPU, NIC, leaf, spine, leaf, NIC, GPU
  REQUIRE(g.path_latency_ns(0, 511) == Approx(6000.0));
  REQUIRE(g.routes_kept() == 1);
}

TEST_CASE("routes found on demand are the fewest-hop ones, checked against a brute-force search") {
  // Fat tree of 3 nodes x 4 GPUs, 2 NICs per node on the host, leaves of 4 ports (NICs 0-3 on leaf 0,
  // 4-5 on leaf 1): the hop count of every pair's route equals an independent breadth-first search over
  // the arcs, the route is connected from source to destination and never transits a GPU.
  const NetworkGraph g(cluster("hgx-h100",
                               "nodes = 3\ngpus_per_node = 4\nnics_per_node = 2\nscale_out = \"fat_tree\"\n"
                               "leaf_radix = 4"));
  const auto hops = [&](int src, int dst) {
    std::vector<int> dist(g.num_vertices(), -1);
    std::vector<int> queue{src};
    dist[static_cast<std::size_t>(src)] = 0;
    for (std::size_t h = 0; h < queue.size(); ++h) {
      const int u = queue[h];
      if (u != src && g.vertex(u).kind == VertexKind::gpu) {
        continue;
      }
      for (int a = 0; a < g.num_arcs(); ++a) {
        const int t = g.arc(a).to;
        if (g.arc(a).from == u && dist[static_cast<std::size_t>(t)] < 0) {
          dist[static_cast<std::size_t>(t)] = dist[static_cast<std::size_t>(u)] + 1;
          queue.push_back(t);
        }
      }
    }
    return dist[static_cast<std::size_t>(dst)];
  };
  for (int s = 0; s < g.num_gpus(); ++s) {
    for (int d = 0; d < g.num_gpus(); ++d) {
      const auto p = g.path(s, d);
      REQUIRE(static_cast<int>(p.size()) == (s == d ? 0 : hops(s, d)));
      int at = s;
      double latency = 0.0;
      for (const int a : p) {
        REQUIRE(g.arc(a).from == at);
        REQUIRE((at == s || g.vertex(at).kind != VertexKind::gpu));
        at = g.arc(a).to;
        latency += g.arc(a).latency_ns;
      }
      REQUIRE(at == d);
      REQUIRE(g.path_latency_ns(s, d) == latency);
    }
  }
}
