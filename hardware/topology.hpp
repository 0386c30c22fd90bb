// SPDX-License-Identifier: Apache-2.0
#pragma once
// Cluster layout: `nodes` x `gpus_per_node` GPUs, one link type inside a node (NVLink / PCIe) and one
// between nodes (InfiniBand / Ethernet, one NIC per GPU, rail-optimised), each with alpha-beta costs.
#include "core/params.hpp"
#include "hardware/nccl_tuning.hpp"

namespace epsim::hardware {

struct LinkSpec {
  double bw_gbps = 0.0;     ///< bandwidth per GPU per direction, GB/s (= bytes per ns)
  double latency_us = 0.0;  ///< one-way latency of a transfer (alpha), microseconds
  /// Share of bw_gbps that bulk transfers and collectives achieve (protocol headers, flow control,
  /// copy engines): measured, hardware/presets/links.toml. The network graph's arcs carry bw x this.
  double efficiency = 1.0;
  /// All-reduce algorithm bandwidth with in-switch reduction (NVLink SHARP), GB/s; 0 = not available.
  double nvls_gbps = 0.0;
  /// NCCL's class of the link (its hop latencies, LL128 on NVLink only) and its LL protocol's bandwidth cap on
  /// one node (tuning.cc llMaxBws, by GPU generation; 0 = none): nccl_tuning.hpp.
  NcclHw nccl_hw = NcclHw::nvlink;
  double nccl_ll_max_gbps = 0.0;
  /// On a full mesh (Infinity Fabric), the peer links a GPU's port stands for: bw_gbps is their sum, and a
  /// collective over g GPUs of the node reaches min(g - 1, mesh_peers) of them. 0: a switch or PCIe port.
  int mesh_peers = 0;
  double effective_gbps() const { return bw_gbps * efficiency; }
};

class Topology {
 public:
  Topology(int nodes, int gpus_per_node, LinkSpec intra, LinkSpec inter);
  int nodes() const { return nodes_; }
  int gpus_per_node() const { return gpus_per_node_; }
  int num_gpus() const { return nodes_ * gpus_per_node_; }
  int node_of(int gpu) const { return gpu / gpus_per_node_; }
  const LinkSpec& intra() const { return intra_; }
  const LinkSpec& inter() const { return inter_; }

 private:
  int nodes_;
  int gpus_per_node_;
  LinkSpec intra_;
  LinkSpec inter_;
};

/// Parses a link table (`bw_gbps`, `latency_us`) with the given defaults.
LinkSpec parse_link(core::ParamTable& t, LinkSpec defaults);

/// A node's scale-up port as `gpus` of its GPUs see it among themselves: on a mesh, only their links to
/// each other (min(gpus - 1, mesh_peers) of the port's peer links); a switch port is the same for any group.
LinkSpec among(const LinkSpec& intra, int gpus);

}  // namespace epsim::hardware
