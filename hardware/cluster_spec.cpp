// SPDX-License-Identifier: Apache-2.0
#include "hardware/cluster_spec.hpp"

#include <fmt/format.h>

#include <array>
#include <span>

#include "core/error.hpp"

#include "hardware/link_types.hpp"

namespace epsim::hardware {

std::span<const core::EmbeddedFile> embedded_clusters();

namespace {
constexpr std::array<core::Choice<ScaleUp>, 3> k_scale_up{
    {{"switch", ScaleUp::switch_fabric}, {"mesh", ScaleUp::mesh}, {"pcie", ScaleUp::pcie}}};
constexpr std::array<core::Choice<ScaleOut>, 3> k_scale_out{
    {{"rail", ScaleOut::rail}, {"fat_tree", ScaleOut::fat_tree}, {"none", ScaleOut::none}}};
}  // namespace

ClusterSpec parse_cluster_spec(core::ParamTable& t) {
  ClusterSpec c;
  c.name = t.string("name", "", "display name");
  c.gpu = t.string("gpu", "", "GPU preset the cluster is made of (default of [gpu] preset)");
  c.nodes = static_cast<int>(t.integer("nodes", c.nodes, "nodes", {1, 1 << 16}));
  c.gpus_per_node =
      static_cast<int>(t.integer("gpus_per_node", c.gpus_per_node, "GPUs per node (scale-up domain)", {1, 1024}));
  c.scale_up = t.choice<ScaleUp>("scale_up", ScaleUp::switch_fabric, "fabric inside a node", k_scale_up);
  c.scale_out = t.choice<ScaleOut>("scale_out", ScaleOut::rail, "fabric between nodes", k_scale_out);
  c.nics_per_node = static_cast<int>(
      t.integer("nics_per_node", c.gpus_per_node, "scale-out NICs per node (default: one per GPU)", {1, 1024}));
  c.gpus_per_pcie_switch = static_cast<int>(
      t.integer("gpus_per_pcie_switch", 1, "pcie scale-up: GPUs sharing a PCIe switch uplink", {1, 64}));
  c.leaf_radix =
      static_cast<int>(t.integer("leaf_radix", c.leaf_radix, "fat tree: NIC ports per leaf switch", {1, 4096}));
  c.oversubscription = t.real("oversubscription", 1.0, "leaf downlink / uplink bandwidth ratio", {1.0, 64.0});
  c.collective_overhead_us = t.real("collective_overhead_us", c.collective_overhead_us,
                                    "fixed software cost of one collective, microseconds", core::k_non_negative);
  auto intra = t.table("intra_node", "scale-up link (GPU to switch, GPU pair in a mesh, GPU to PCIe switch)");
  c.scale_up_link = parse_link_table(intra, c.scale_up == ScaleUp::pcie   ? "pcie4_x16"
                                            : c.scale_up == ScaleUp::mesh ? "infinity_fabric"
                                                                          : "nvlink4");
  auto inter = t.table("inter_node", "scale-out link (NIC to leaf switch)");
  c.nic_link = parse_link_table(inter, "ib_ndr");
  auto pcie = t.table("pcie", "host PCIe link (GPU to NIC or root complex, PCIe switch uplink)");
  c.pcie_link = parse_link_table(pcie, c.scale_up == ScaleUp::pcie ? "pcie4_x16" : "pcie5_x16");

  if (!t.documenting()) {
    if (c.num_gpus() > k_max_cluster_gpus) {
      t.fail("nodes", fmt::format("{} nodes x {} GPUs = {} GPUs; epsim models clusters of at most {} GPUs", c.nodes,
                                  c.gpus_per_node, c.num_gpus(), k_max_cluster_gpus));
    }
    if (c.nodes > 1 && c.scale_out == ScaleOut::none) {
      t.fail("scale_out", fmt::format("a cluster of {} nodes needs a scale-out fabric (rail or fat_tree)", c.nodes));
    }
    if (c.scale_out == ScaleOut::rail && c.nics_per_node != c.gpus_per_node) {
      t.fail("nics_per_node", fmt::format("a rail-optimised fabric needs one NIC per GPU ({}), got {}", c.gpus_per_node,
                                          c.nics_per_node));
    }
    if (c.gpus_per_node % c.nics_per_node != 0) {
      t.fail("nics_per_node", fmt::format("must divide gpus_per_node ({}), got {}", c.gpus_per_node, c.nics_per_node));
    }
    if (c.scale_up == ScaleUp::pcie && c.gpus_per_node % c.gpus_per_pcie_switch != 0) {
      t.fail("gpus_per_pcie_switch", fmt::format("must divide gpus_per_node ({})", c.gpus_per_node));
    }
  }
  return c;
}

ClusterSpec load_cluster_preset(const std::string& name) {
  if (const std::string unknown = cluster_presets().unknown_message(name); !unknown.empty()) {
    throw core::Error(unknown);
  }
  core::ParamTable t({core::ParamLayer{&cluster_presets().get(name, "", ""), cluster_presets().label(name)}},
                     "cluster");
  return parse_cluster_spec(t);
}

const core::PresetCatalog& cluster_presets() {
  static const core::PresetCatalog catalog("clusters", embedded_clusters());
  return catalog;
}

}  // namespace epsim::hardware
