// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "hardware/all_to_all.hpp"
#include "hardware/moe_tile.hpp"

using namespace epsim::hardware;

namespace {

// Per-GPU aggregates of a full traffic matrix (bytes[src][dst]) on a topology, computed directly.
PerGpuTraffic aggregate(const Topology& topo, const std::vector<std::vector<double>>& bytes) {
  PerGpuTraffic t;
  t.resize(topo.num_gpus());
  for (int s = 0; s < topo.num_gpus(); ++s) {
    for (int d = 0; d < topo.num_gpus(); ++d) {
      if (s == d) {
        continue;
      }
      const double b = bytes[static_cast<std::size_t>(s)][static_cast<std::size_t>(d)];
      if (topo.node_of(s) == topo.node_of(d)) {
        t.send_intra(s) += b;
        t.recv_intra(d) += b;
      } else {
        t.send_inter(s) += b;
        t.recv_inter(d) += b;
      }
    }
  }
  return t;
}

// 2 nodes x 2 GPUs; NVLink-like 100 GB/s, 1 us inside a node; 10 GB/s, 5 us between nodes.
const Topology k_topo(2, 2, LinkSpec{100.0, 1.0}, LinkSpec{10.0, 5.0});

}  // namespace

TEST_CASE("uniform all-to-all on 2 nodes: the inter-node link is the bottleneck") {
  // Every GPU sends 1 MB to each other GPU: 1 MB intra (10 us at 100 GB/s), 2 MB inter (200 us at 10 GB/s).
  std::vector<std::vector<double>> m(4, std::vector<double>(4, 1e6));
  const auto c = all_to_all_cost(k_topo, aggregate(k_topo, m));
  REQUIRE(c.time_ns == Approx(5000.0 + 200000.0));
  REQUIRE(c.intra_bytes == Approx(4e6));
  REQUIRE(c.inter_bytes == Approx(8e6));
}

TEST_CASE("skewed all-to-all: the busiest port decides") {
  // GPU0 -> GPU1: 40 MB over NVLink = 400 us; GPU0 -> GPU2: 1 MB over the NIC = 100 us. The intra-node
  // port dominates; the latency is the inter-node one because some bytes leave the node.
  std::vector<std::vector<double>> m(4, std::vector<double>(4, 0.0));
  m[0][1] = 40e6;
  m[0][2] = 1e6;
  const auto c = all_to_all_cost(k_topo, aggregate(k_topo, m));
  REQUIRE(c.time_ns == Approx(5000.0 + 400000.0));
  // Receivers count too: GPU3 receiving 3 MB from GPUs 0, 1 and 2 (1 MB each; 2 MB inter-node).
  std::vector<std::vector<double>> r(4, std::vector<double>(4, 0.0));
  r[0][3] = 1e6;
  r[1][3] = 1e6;
  r[2][3] = 1e6;
  const auto c2 = all_to_all_cost(k_topo, aggregate(k_topo, r));
  REQUIRE(c2.time_ns == Approx(5000.0 + 2e6 / 10.0));
}

TEST_CASE("traffic inside one node pays the intra-node latency, no traffic costs nothing") {
  std::vector<std::vector<double>> m(4, std::vector<double>(4, 0.0));
  m[2][3] = 1e6;
  REQUIRE(all_to_all_cost(k_topo, aggregate(k_topo, m)).time_ns == Approx(1000.0 + 10000.0));
  std::vector<std::vector<double>> none(4, std::vector<double>(4, 0.0));
  REQUIRE(all_to_all_cost(k_topo, aggregate(k_topo, none)).time_ns == 0.0);
}

TEST_CASE("one-pass separable port totals equal the per-GPU traffic's totals bit for bit", "[hardware]") {
  // Random shares and pair counts on several layouts, idle GPUs included: the fused pass must give the
  // same four numbers as separable_traffic followed by PortTotals::of.
  std::uint64_t state = 12345;
  const auto next = [&state] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state >> 11) * 0x1.0p-53;
  };
  for (const auto& [nodes, per_node] : std::vector<std::pair<int, int>>{{1, 8}, {2, 4}, {8, 8}, {3, 5}}) {
    const Topology topo(nodes, per_node, LinkSpec{400.0, 2.0}, LinkSpec{50.0, 5.0});
    const int gpus = topo.num_gpus();
    for (int trial = 0; trial < 50; ++trial) {
      Eigen::ArrayXd share(gpus);
      Eigen::ArrayXd pairs(gpus);
      for (int g = 0; g < gpus; ++g) {
        share(g) = next() < 0.2 ? 0.0 : next();
        pairs(g) = next() < 0.2 ? 0.0 : std::floor(next() * 300.0);
      }
      share /= share.sum() > 0.0 ? share.sum() : 1.0;
      Eigen::ArrayXd a(nodes);
      Eigen::ArrayXd b(nodes);
      PerGpuTraffic full;
      full.resize(gpus);
      separable_traffic(topo, share, pairs, 1.0, a, b, full);
      const PortTotals want = PortTotals::of(full);
      PerGpuTraffic sends;
      sends.resize(gpus);
      const PortTotals got = separable_port_totals(topo, share, pairs, a, b, sends);
      INFO(nodes << " x " << per_node << ", trial " << trial);
      CHECK(got.intra_sum == want.intra_sum);
      CHECK(got.inter_sum == want.inter_sum);
      CHECK(got.intra_max == want.intra_max);
      CHECK(got.inter_max == want.inter_max);
    }
  }
}

TEST_CASE("the MoE tile rule: small up to the threshold or the local experts and large above", "[hardware]") {
  const MoeTileRule by_experts{16, 64, 0};
  CHECK(by_experts.limit(4) == 4);
  CHECK(by_experts.tile(4, 4) == 16);
  CHECK(by_experts.tile(5, 4) == 64);
  const MoeTileRule fixed{32, 128, 100};
  CHECK(fixed.tile(100, 4) == 32);
  CHECK(fixed.tile(101, 4) == 128);
  CHECK(pad_to_tile(0, 16) == 0);
  CHECK(pad_to_tile(17, 16) == 32);
  CHECK(pad_to_tile(7, 24) == 24);  // not a power of two: the division
  CHECK(pad_to_tile(49, 24) == 72);
}
