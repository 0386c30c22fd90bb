// SPDX-License-Identifier: Apache-2.0
#pragma once
// The shape of a cluster: GPUs per node and how they connect. Scale-up inside a node is a switch fabric
// (NVSwitch / NVLink Switch: every GPU one link to a non-blocking switch), a full mesh (Infinity
// Fabric: one link per GPU pair) or PCIe (GPUs under PCIe switches under the host root complex).
// Scale-out is rail-optimised (NIC i of every node on leaf i; leaves joined by a spine), a fat tree
// (NICs on leaves of `leaf_radix` ports, leaves on a spine) or none. Presets in presets/clusters/.
#include <string>

#include "core/params.hpp"
#include "core/presets.hpp"
#include "hardware/topology.hpp"

namespace epsim::hardware {

enum class ScaleUp : std::uint8_t { switch_fabric, mesh, pcie };
enum class ScaleOut : std::uint8_t { none, rail, fat_tree };

/// The largest cluster a config may describe: a run's memory grows with its GPUs (per-GPU state, the
/// routes its groups use) and building the network graph walks every GPU pair once (GPUs^2 time,
/// ~10 s at this size), so larger clusters are refused before anything is built (docs/guarantees.md).
inline constexpr int k_max_cluster_gpus = 16384;

struct ClusterSpec {
  std::string name;
  std::string gpu;  ///< GPU preset the cluster is built of (the default of [gpu] preset)
  int nodes = 1;
  int gpus_per_node = 8;
  ScaleUp scale_up = ScaleUp::switch_fabric;
  LinkSpec scale_up_link{450.0, 0.5};  ///< GPU <-> switch, GPU <-> GPU (mesh), GPU <-> PCIe switch (pcie)
  LinkSpec pcie_link{63.0, 1.0};       ///< GPU <-> NIC / host, PCIe switch <-> root complex (pcie)
  int gpus_per_pcie_switch = 1;        ///< pcie scale-up: GPUs sharing one switch uplink
  ScaleOut scale_out = ScaleOut::rail;
  LinkSpec nic_link{50.0, 1.0};         ///< NIC <-> leaf switch
  int nics_per_node = 8;                ///< rail needs one per GPU
  int leaf_radix = 32;                  ///< fat tree: NIC ports per leaf switch
  double oversubscription = 1.0;        ///< leaf downlink / uplink bandwidth ratio
  double collective_overhead_us = 5.0;  ///< fixed software cost of one collective (launch, sync)

  int num_gpus() const { return nodes * gpus_per_node; }
};

/// Parses [cluster] (a preset layered under overrides); validates consistency.
ClusterSpec parse_cluster_spec(core::ParamTable& t);
const core::PresetCatalog& cluster_presets();
/// A shipped preset as a ClusterSpec; throws core::Error listing the valid names if unknown.
ClusterSpec load_cluster_preset(const std::string& name);

}  // namespace epsim::hardware
