// SPDX-License-Identifier: Apache-2.0
// NCCL's all-reduce choice (hardware/nccl_tuning.hpp) against times worked by hand from NCCL's constants
// (NVIDIA/nccl src/graph/tuning.cc at 5067397c): base latency + steps x hop latency + bytes / bandwidth.
#include <algorithm>
#include <catch2/catch.hpp>

#include "hardware/cluster_spec.hpp"
#include "hardware/nccl_all_reduce.hpp"
#include "hardware/nccl_tuning.hpp"
#include "hardware/network_graph.hpp"

using Catch::Detail::Approx;
using epsim::hardware::NcclAlgo;
using epsim::hardware::NcclCost;
using epsim::hardware::NcclFabric;
using epsim::hardware::NcclHw;
using epsim::hardware::NcclProto;

namespace {

// An HGX H100 as its links say: NVLink 4 at 450 x 0.82 = 369 GB/s, NVLS 274 GB/s, Hopper's LL cap 141 GB/s,
// eight NDR NICs per node at 50 x 0.94 = 47 GB/s, 5.5 us launch (collective overhead 5 + one 0.5 us hop).
NcclFabric h100() {
  NcclFabric f;
  f.hw = NcclHw::nvlink;
  f.bus_gbps = 369.0;
  f.nvls_gbps = 274.0;
  f.ll_max_gbps = 141.0;
  f.net_bus_gbps = 8 * 47.0;
  f.launch_us = 5.5;
  return f;
}

void check(const NcclCost& c, NcclAlgo algo, NcclProto proto, double ns) {
  CHECK(epsim::hardware::nccl_choice_name(c.algo, c.proto) == epsim::hardware::nccl_choice_name(algo, proto));
  CHECK(c.time_ns == Approx(ns).epsilon(1e-9));
}

}  // namespace

TEST_CASE("NCCL on 8 H100: ring LL for small messages, NVLS once its 25 us start-up pays") {
  const NcclFabric f = h100();
  // 8 B: ring LL = 6.6 + 14 steps x 0.6 us; LL's bus bandwidth min(141, 369 / 2) x 8 / 14.
  check(nccl_all_reduce(f, 8, 1, 8.0), NcclAlgo::ring, NcclProto::ll, 5500.0 + 15000.0 + 8.0 / (141.0 * 8.0 / 14.0));
  // Tree LL is 0.2 us behind: 6.8 + 2 x 7 levels x 0.6.
  check(nccl_all_reduce_with(f, 8, 1, 8.0, NcclAlgo::tree, NcclProto::ll), NcclAlgo::tree, NcclProto::ll,
        5500.0 + 15200.0 + 8.0 / (369.0 * 0.92 / 3.8 * 0.5));
  // 1 MiB: ring LL 33.5 us still beats NVLS's 25 + 1 MiB / 274 GB/s = 34.3 us (with the launch).
  check(nccl_all_reduce(f, 8, 1, 1048576.0), NcclAlgo::ring, NcclProto::ll,
        5500.0 + 15000.0 + 1048576.0 / (141.0 * 8.0 / 14.0));
  check(nccl_all_reduce_with(f, 8, 1, 1048576.0, NcclAlgo::nvls, NcclProto::simple), NcclAlgo::nvls, NcclProto::simple,
        5500.0 + 25000.0 + 1048576.0 / 274.0);
  // Tree LL128 at 1 MiB: 14 + 2 x 7 x 1.25 us; 369 x 0.92 x 7/9 x 0.5, times NCCL's tree correction 0.6
  // (LL128, 64 B x 2^14).
  check(nccl_all_reduce_with(f, 8, 1, 1048576.0, NcclAlgo::tree, NcclProto::ll128), NcclAlgo::tree, NcclProto::ll128,
        5500.0 + 31500.0 + 1048576.0 / (369.0 * 0.92 * 7.0 / 9.0 * 0.5 * 0.6));
  // 64 MiB: NVLS.
  check(nccl_all_reduce(f, 8, 1, 67108864.0), NcclAlgo::nvls, NcclProto::simple, 5500.0 + 25000.0 + 67108864.0 / 274.0);
  // Ring Simple: 8.4 + 14 x 3.4 us at the full bus bandwidth; LL128: 14 + 14 x 1.9 at 0.92 of it.
  check(nccl_all_reduce_with(f, 8, 1, 67108864.0, NcclAlgo::ring, NcclProto::simple), NcclAlgo::ring, NcclProto::simple,
        5500.0 + 56000.0 + 67108864.0 / (369.0 * 8.0 / 14.0));
  check(nccl_all_reduce_with(f, 8, 1, 67108864.0, NcclAlgo::ring, NcclProto::ll128), NcclAlgo::ring, NcclProto::ll128,
        5500.0 + 40600.0 + 67108864.0 / (369.0 * 0.92 * 8.0 / 14.0));
}

TEST_CASE("NCCL without NVLS (A100): ring Simple at 1 GiB, and no LL128 on PCI") {
  NcclFabric f = h100();
  f.nvls_gbps = 0.0;
  f.bus_gbps = 246.0;  // 300 x 0.82
  f.ll_max_gbps = 87.7;
  CHECK(nccl_all_reduce_with(f, 8, 1, 1024.0, NcclAlgo::nvls, NcclProto::simple).time_ns < 0.0);
  check(nccl_all_reduce(f, 8, 1, 1073741824.0), NcclAlgo::ring, NcclProto::simple,
        5500.0 + 56000.0 + 1073741824.0 / (246.0 * 8.0 / 14.0));
  // 4 GPUs, 4 KiB: ring LL = 6.6 + 6 x 0.6 us at min(87.7, 123) x 4 / 6.
  check(nccl_all_reduce(f, 4, 1, 4096.0), NcclAlgo::ring, NcclProto::ll,
        5500.0 + 10200.0 + 4096.0 / (87.7 * 4.0 / 6.0));
  f.hw = NcclHw::pci;
  CHECK(nccl_all_reduce_with(f, 4, 1, 4096.0, NcclAlgo::ring, NcclProto::ll128).time_ns < 0.0);
  // PCI hops: ring LL 6.6 + 6 x 1.0 us.
  check(nccl_all_reduce(f, 4, 1, 4096.0), NcclAlgo::ring, NcclProto::ll,
        5500.0 + 12600.0 + 4096.0 / (87.7 * 4.0 / 6.0));
}

TEST_CASE("NCCL across H100 nodes: tree LL for small messages, NVLS tree (or the ring) for large ones") {
  const NcclFabric f = h100();
  // 8 B: tree LL = 6.8 + 2 x (7 x 0.6 + log2(2) x 5.0) = 25.2 us; ring LL = 6.6 + 28 x max(0.6, 1.0 net
  // overhead) + 2 x 2.7 = 40 us. LL's cap across two nodes: 39 GB/s.
  check(nccl_all_reduce(f, 16, 2, 8.0), NcclAlgo::tree, NcclProto::ll,
        5500.0 + 25200.0 + 8.0 / (std::min(369.0 * 0.92 / 3.8, 39.0) * 0.5));
  check(nccl_all_reduce_with(f, 16, 2, 8.0, NcclAlgo::ring, NcclProto::ll), NcclAlgo::ring, NcclProto::ll,
        5500.0 + 40000.0 + 8.0 / (39.0 * 16.0 / 30.0));
  // 1 GiB: NVLS tree = 25 + 2 x log2(2) x 20.9 us at min(NVLS 274, 2 nodes x 8 x 47 x 16 / 30) GB/s beats
  // ring Simple = 8.4 + 28 x max(3.4, 3 x 1.0) + 2 x 14 us at min(369, 8 x 47) x 16 / 30.
  check(nccl_all_reduce(f, 16, 2, 1073741824.0), NcclAlgo::nvls_tree, NcclProto::simple,
        5500.0 + 66800.0 + 1073741824.0 / 274.0);
  check(nccl_all_reduce_with(f, 16, 2, 1073741824.0, NcclAlgo::ring, NcclProto::simple), NcclAlgo::ring,
        NcclProto::simple, 5500.0 + 131600.0 + 1073741824.0 / (369.0 * 16.0 / 30.0));
  // NVLS needs CollNet across nodes, NVLS tree more than one node.
  CHECK(nccl_all_reduce_with(f, 16, 2, 1073741824.0, NcclAlgo::nvls, NcclProto::simple).time_ns < 0.0);
  CHECK(nccl_all_reduce_with(f, 8, 1, 1073741824.0, NcclAlgo::nvls_tree, NcclProto::simple).time_ns < 0.0);
  // Without NVLS (A100-like), the ring; four nodes: the NICs' 4 x 25 GB/s bound the bus, LL's cap is 20.4.
  NcclFabric a100 = f;
  a100.nvls_gbps = 0.0;
  check(nccl_all_reduce(a100, 16, 2, 1073741824.0), NcclAlgo::ring, NcclProto::simple,
        5500.0 + 131600.0 + 1073741824.0 / (369.0 * 16.0 / 30.0));
  a100.net_bus_gbps = 100.0;
  // Ring Simple on 4 nodes of 8: 8.4 + (62 - 6) x 3.4 + 6 x 14 us at 100 x 32 / 62.
  check(nccl_all_reduce_with(a100, 32, 4, 1073741824.0, NcclAlgo::ring, NcclProto::simple), NcclAlgo::ring,
        NcclProto::simple, 5500.0 + (8.4 + 56.0 * 3.4 + 6.0 * 14.0) * 1e3 + 1073741824.0 / (100.0 * 32.0 / 62.0));
}

TEST_CASE("the HGX H100 preset gives NCCL the fabric the hand values use") {
  const epsim::hardware::NetworkGraph graph(epsim::hardware::load_cluster_preset("hgx-h100"));
  const NcclFabric f = epsim::hardware::nccl_fabric(graph.port_view(), 8);
  CHECK(f.bus_gbps == Approx(369.0));
  CHECK(f.nvls_gbps == Approx(274.0));
  CHECK(f.ll_max_gbps == Approx(141.0));
  CHECK(f.hw == NcclHw::nvlink);
  // The launch: collective_overhead_us 5 + the path GPU -> NVSwitch -> GPU, two 0.5 us hops.
  CHECK(f.launch_us == Approx(6.0));
  check(epsim::hardware::nccl_all_reduce_on(graph.port_view(), 8, 8.0), NcclAlgo::ring, NcclProto::ll,
        6000.0 + 15000.0 + 8.0 / (141.0 * 8.0 / 14.0));
  // The step loop's TP all-reduce prices the same from the scale-up link alone.
  CHECK(epsim::hardware::intra_node_all_reduce_ns(graph.port_view().intra(), 8, 8.0) ==
        Approx(6000.0 + 15000.0 + 8.0 / (141.0 * 8.0 / 14.0)));
  CHECK(epsim::hardware::intra_node_all_reduce_ns(graph.port_view().intra(), 1, 8.0) == 0.0);
  CHECK_THROWS_WITH(epsim::hardware::nccl_all_reduce_on(graph.port_view(), 9, 8.0),
                    "an all-reduce needs 2 GPUs or more, at most the cluster's");
}

TEST_CASE("on a full mesh (8 x MI300X) the rings use every peer link the collective's GPUs have") {
  // RCCL spreads an all-reduce's channels over disjoint rings, one peer link each (AMD's MI300X xGMI
  // blog), so its bus bandwidth is the links between the GPUs taking part: 7 for the node, 3 for 4 GPUs.
  const epsim::hardware::ClusterSpec spec = epsim::hardware::load_cluster_preset("mi300x-8");
  const epsim::hardware::NetworkGraph graph(spec);
  const double pair_gbps = spec.scale_up_link.effective_gbps();
  const epsim::hardware::LinkSpec intra = graph.port_view().intra();
  CHECK(intra.mesh_peers == 7);
  CHECK(intra.effective_gbps() == Approx(7.0 * pair_gbps));
  CHECK(epsim::hardware::nccl_fabric(graph.port_view(), 8).bus_gbps == Approx(7.0 * pair_gbps));
  for (const double bytes : {8.0, 8e6, 1.0737e9}) {
    for (const int gpus : {2, 4, 8}) {
      // The same all-reduce on a switch port of the bandwidth of those links.
      epsim::hardware::LinkSpec as_switch = intra;
      as_switch.mesh_peers = 0;
      as_switch.bw_gbps = intra.bw_gbps * (gpus - 1) / 7.0;
      INFO(bytes << " bytes over " << gpus << " GPUs");
      CHECK(epsim::hardware::intra_node_all_reduce_ns(intra, gpus, bytes) ==
            Approx(epsim::hardware::intra_node_all_reduce_ns(as_switch, gpus, bytes)).epsilon(1e-12));
      CHECK(epsim::hardware::nccl_all_reduce_on(graph.port_view(), gpus, bytes).time_ns ==
            Approx(epsim::hardware::intra_node_all_reduce_ns(as_switch, gpus, bytes)).epsilon(1e-12));
    }
  }
  // At 1 GiB the bandwidth term rules: 8 GPUs move 2 x 7/8 of the bytes over 7 links, not over one.
  const double t8 = epsim::hardware::intra_node_all_reduce_ns(intra, 8, 1.0737e9);
  CHECK(t8 == Approx(2.0 * 7.0 / 8.0 * 1.0737e9 / (7.0 * pair_gbps)).epsilon(0.02));
}
