// SPDX-License-Identifier: Apache-2.0
#include "hardware/nccl_tuning.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

namespace epsim::hardware {
namespace {

// NCCL's tuning constants, from NVIDIA/nccl src/graph/tuning.cc at commit
// 5067397c2676d5aed50042fc39e5c8ee96eb0027 (2026-06-11; unchanged in substance since NCCL 2.19):
// ncclTunerConstantsDefaults, in microseconds and GB/s. Rows: tree, ring, NVLS, NVLS tree; columns: LL,
// LL128, Simple.
using Row = std::array<double, 3>;
constexpr std::array<Row, 4> k_base_latency_us{{{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}}};
// hwLatencies: one hop (a ring step, a tree level) on NVLink, PCI and the network.
constexpr std::array<Row, 4> k_nvlink_hop_us{{{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0.0, 0.0, 25.0}, {0.0, 0.0, 25.0}}};
constexpr std::array<Row, 4> k_pci_hop_us{{{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}}};
constexpr std::array<Row, 4> k_net_hop_us{{{5.0, 8.5, 14.0}, {2.7, 4.0, 14.0}, {0.0, 0.0, 18.0}, {0.0, 0.0, 20.9}}};
// llMaxBws across nodes (index by node count 2 / more; x86 Intel hosts, NCCL's first row).
constexpr double k_ll_max_two_nodes_gbps = 39.0;
constexpr double k_ll_max_more_nodes_gbps = 20.4;
// getNetOverhead (x86 Intel: 1 us; Simple pays it three times) bounds a ring's intra-node step across nodes.
constexpr double k_net_overhead_us = 1.0;
// The protocols' shares of the bus bandwidth (ncclTopoTuneModel's "model refinements").
constexpr double k_ring_ll_share = 0.5;
constexpr double k_ring_ll128_share = 0.92;
constexpr double k_tree_share = 0.92;
constexpr double k_tree_ll_share = 1.0 / 3.8;
constexpr double k_tree_ll128_share_one_node = 7.0 / 9.0;
constexpr double k_tree_ll128_share_nodes = 120.0 / 128.0;
// treeCorrectionFactor: the tree's bandwidth at 64 B x 2^i (i = log2(bytes / 64), 0 .. 22), per protocol.
constexpr std::array<std::array<double, 24>, 3> k_tree_correction{{
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9},
}};
constexpr int k_tree_corrected_sizes = 23;  // NCCL applies the factor for log2 sizes 0 .. 22

std::size_t index(NcclAlgo a) {
  switch (a) {
    case NcclAlgo::tree:
      return 0;
    case NcclAlgo::ring:
      return 1;
    case NcclAlgo::nvls:
      return 2;
    case NcclAlgo::nvls_tree:
      return 3;
  }
  return 1;
}

std::size_t index(NcclProto p) {
  return static_cast<std::size_t>(p);
}

// floor(log2(n)) for n >= 1, -1 for n < 1 (NCCL's log2i).
int log2_down(std::uint64_t n) {
  int r = -1;
  while (n != 0) {
    n >>= 1U;
    ++r;
  }
  return r;
}

double intra_hop_us(const NcclFabric& f, NcclAlgo a, NcclProto p) {
  return (f.hw == NcclHw::nvlink ? k_nvlink_hop_us : k_pci_hop_us)[index(a)][index(p)];
}

}  // namespace

NcclCost nccl_all_reduce_with(const NcclFabric& f, int gpus, int nodes, double bytes, NcclAlgo algo, NcclProto proto) {
  NcclCost c{-1.0, algo, proto};
  const auto n = static_cast<double>(gpus);
  const int ppn = gpus / nodes;
  const std::size_t a = index(algo);
  const std::size_t p = index(proto);
  // LL128 runs only over NVLink paths (tuning.cc: typeIntra <= PATH_NVB). NVLS is Simple, on one node (across
  // nodes it needs CollNet); NVLS tree is Simple across nodes (NCCL disables it on one node).
  const bool sharp = algo == NcclAlgo::nvls || algo == NcclAlgo::nvls_tree;
  if ((proto == NcclProto::ll128 && f.hw != NcclHw::nvlink) ||
      (sharp && (proto != NcclProto::simple || f.nvls_gbps <= 0.0 || f.hw != NcclHw::nvlink)) ||
      (algo == NcclAlgo::nvls && nodes != 1) || (algo == NcclAlgo::nvls_tree && nodes == 1)) {
    return c;
  }
  if (algo == NcclAlgo::nvls) {
    c.time_ns = f.launch_us * 1e3 + k_nvlink_hop_us[a][p] * 1e3 + bytes / f.nvls_gbps;
    return c;
  }
  if (algo == NcclAlgo::nvls_tree) {
    // SHARP inside each node, a tree of nodes over the NICs: the slower of the two. Between two nodes the
    // tree's bandwidth doubles (tuning.cc: each node reduces and sends half); its algorithm bandwidth is the
    // bus bandwidth x n / (2 (n - 1)), as for a ring.
    const double net_algbw = f.net_bus_gbps * (nodes <= 2 ? 2.0 : 1.0) * n / (2.0 * (n - 1.0));
    const double levels = log2_down(static_cast<std::uint64_t>(nodes));
    const double latency_us = k_nvlink_hop_us[a][p] + 2.0 * levels * (k_net_hop_us[a][p] + 2.0 * f.net_latency_us);
    c.time_ns = f.launch_us * 1e3 + latency_us * 1e3 + bytes / std::min(f.nvls_gbps, net_algbw);
    return c;
  }
  const double bus = nodes == 1 ? f.bus_gbps : std::min(f.bus_gbps, f.net_bus_gbps);
  const double ll_max = nodes == 1 ? f.ll_max_gbps : (nodes == 2 ? k_ll_max_two_nodes_gbps : k_ll_max_more_nodes_gbps);
  const auto capped = [&](double bw) { return ll_max > 0.0 ? std::min(bw, ll_max) : bw; };
  const double simple_net_extra = proto == NcclProto::simple ? f.net_latency_us : 0.0;
  double latency_us = k_base_latency_us[a][p];
  double algbw = 0.0;
  if (algo == NcclAlgo::ring) {
    const double steps = 2.0 * (n - 1.0);
    const double inter_steps = 2.0 * (nodes - 1);
    double intra_us = intra_hop_us(f, algo, proto);
    if (nodes > 1) {
      intra_us = std::max(intra_us, k_net_overhead_us * (proto == NcclProto::simple ? 3.0 : 1.0));
    }
    // With one GPU per node every step is exposed: NCCL charges the tree's network hop.
    const double inter_us =
        (ppn == 1 ? k_net_hop_us[index(NcclAlgo::tree)][p] : k_net_hop_us[a][p]) + f.net_latency_us + simple_net_extra;
    latency_us += (steps - inter_steps) * intra_us + inter_steps * inter_us;
    double bw = bus;
    if (proto == NcclProto::ll) {
      bw = capped(bus * k_ring_ll_share);
    } else if (proto == NcclProto::ll128) {
      bw = bus * k_ring_ll128_share;
    }
    algbw = bw * n / steps;
  } else {
    const double intra_us = intra_hop_us(f, algo, proto);
    const double inter_us = k_net_hop_us[a][p] + f.net_latency_us + simple_net_extra;
    latency_us += 2.0 * ((ppn - 1) * intra_us + log2_down(static_cast<std::uint64_t>(nodes)) * inter_us);
    double bw = bus * k_tree_share;
    if (proto == NcclProto::ll) {
      bw = capped(bw * k_tree_ll_share);
    } else if (proto == NcclProto::ll128) {
      bw *= nodes == 1 ? k_tree_ll128_share_one_node : k_tree_ll128_share_nodes;
    }
    algbw = bw * 0.5;
    const int log_size = log2_down(static_cast<std::uint64_t>(std::max(bytes, 0.0)) >> 6U);
    if (log_size >= 0 && log_size < k_tree_corrected_sizes) {
      algbw *= k_tree_correction[p][static_cast<std::size_t>(log_size)];
    }
  }
  if (algbw <= 0.0) {
    return c;
  }
  c.time_ns = f.launch_us * 1e3 + latency_us * 1e3 + bytes / algbw;
  return c;
}

NcclCost nccl_all_reduce(const NcclFabric& f, int gpus, int nodes, double bytes) {
  NcclCost best;
  for (const NcclAlgo a : {NcclAlgo::tree, NcclAlgo::ring, NcclAlgo::nvls, NcclAlgo::nvls_tree}) {
    for (const NcclProto p : {NcclProto::ll, NcclProto::ll128, NcclProto::simple}) {
      const NcclCost c = nccl_all_reduce_with(f, gpus, nodes, bytes, a, p);
      if (c.time_ns >= 0.0 && (best.time_ns < 0.0 || c.time_ns < best.time_ns)) {
        best = c;
      }
    }
  }
  return best;
}

std::string nccl_choice_name(NcclAlgo algo, NcclProto proto) {
  static constexpr std::array<const char*, 4> k_algos{"tree", "ring", "nvls", "nvlstree"};
  static constexpr std::array<const char*, 3> k_protos{"LL", "LL128", "Simple"};
  return std::string(k_algos[index(algo)]) + "/" + k_protos[index(proto)];
}

}  // namespace epsim::hardware
