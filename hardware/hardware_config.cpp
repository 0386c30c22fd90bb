// SPDX-License-Identifier: Apache-2.0
#include "hardware/hardware_config.hpp"

#include <fmt/format.h>

#include <array>

#include "core/presets.hpp"

namespace epsim::hardware {

HardwareConfig parse_hardware_sections(core::ParamTable& root) {
  HardwareConfig hw;
  // The cluster first: its preset names the default GPU.
  auto cluster = root.table("cluster", "cluster shape, links, variability (a preset and field overrides)");
  const std::string cluster_preset = cluster.string("preset", "", "cluster preset name (epsim list clusters)");
  if (!cluster_preset.empty()) {
    cluster.add_layer(core::preset_layer(cluster, "preset", cluster_presets(), cluster_preset));
  }
  hw.cluster = parse_cluster_spec(cluster);

  auto gpu = root.table("gpu", "GPU type: a preset and field overrides");
  const std::string gpu_preset = gpu.string("preset", hw.cluster.gpu, "GPU preset name (default: the cluster's)");
  if (!gpu_preset.empty()) {
    gpu.add_layer(core::preset_layer(gpu, "preset", gpu_presets(), gpu_preset));
  }
  hw.gpu = parse_gpu_spec(gpu);
  gpu.finish();

  const int gpus = hw.cluster.num_gpus();
  const std::vector<double> factors = cluster.real_list(
      "speed_factors", "shorthand for variability.kind = \"explicit\": one factor per GPU (0.88 = 12 % slow)",
      {0.0, 10.0, true});
  auto variability = cluster.table("variability", "GPU-to-GPU speed variability");
  hw.variability = parse_variability(variability, gpus, hw.gpu.tdp_w);
  variability.finish();
  if (!factors.empty()) {
    if (hw.variability.kind != VariabilityConfig::Kind::none) {
      cluster.fail("speed_factors", "give either speed_factors or [cluster.variability], not both");
    }
    if (static_cast<int>(factors.size()) != gpus) {
      cluster.fail("speed_factors", fmt::format("expected one factor per GPU ({} = {} nodes x {}), got {}", gpus,
                                                hw.cluster.nodes, hw.cluster.gpus_per_node, factors.size()));
    }
    hw.variability.kind = VariabilityConfig::Kind::explicit_list;
    hw.variability.factors = factors;
  }
  static constexpr std::array<core::Choice<CollectiveModelKind>, 3> k_models{{{"auto", CollectiveModelKind::automatic},
                                                                              {"graph", CollectiveModelKind::graph},
                                                                              {"ports", CollectiveModelKind::ports}}};
  hw.collectives.model = cluster.choice<CollectiveModelKind>(
      "collective_model", CollectiveModelKind::automatic,
      "all-to-all costing: graph (exact paths), ports (per-GPU ports), auto", k_models);
  hw.collectives.graph_max_gpus = static_cast<int>(
      cluster.integer("graph_max_gpus", 16, "auto: largest EP group costed on the graph", {1, 1 << 20}));
  cluster.finish();
  auto comm = root.table("communication", "how EP dispatch and combine move tokens (NCCL, DeepEP) and overlap");
  const bool prefill_given = comm.contains("prefill");
  auto prefill = comm.table("prefill", "the prefill pool's overrides of [communication] (disaggregated serving)");
  hw.comm = parse_ep_comm(comm);
  if (prefill_given || prefill.documenting()) {  // documented like the base keys it overrides
    hw.prefill_comm = parse_ep_comm(prefill, &hw.comm);
  }
  prefill.finish();
  comm.finish();
  return hw;
}

}  // namespace epsim::hardware
