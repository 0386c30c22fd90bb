// SPDX-License-Identifier: Apache-2.0
#pragma once
// The hardware sections of an experiment: [gpu], [cluster] with its variability, speed-factor shorthand
// and the choice of collective model. Parsed here, by the layer whose structs they fill.
#include <cstdint>
#include <memory>
#include <optional>

#include "core/params.hpp"
#include "hardware/cluster_spec.hpp"
#include "hardware/ep_comm.hpp"
#include "hardware/gpu_spec.hpp"
#include "hardware/measured_curve.hpp"
#include "hardware/variability.hpp"

namespace epsim::hardware {

/// How all-to-alls are costed (collective_model.hpp), chosen once per EP group.
enum class CollectiveModelKind : std::uint8_t {
  automatic,  ///< graph for EP groups of at most graph_max_gpus GPUs, ports above
  graph,      ///< exactly on the network graph (every flow's route, every arc's load)
  ports,      ///< per-GPU intra/inter-node ports (scales to thousands of GPUs)
};

struct CollectiveConfig {
  CollectiveModelKind model = CollectiveModelKind::automatic;
  int graph_max_gpus = 16;
  /// Measured all-to-alls ([calibration] of an experiment): their measured / modelled ratio corrects every
  /// EP exchange (collective_model.hpp); null = the model alone.
  std::shared_ptr<const MeasuredCurve> exchange_curve = nullptr;
  /// Measured all-reduces inside a node: the same correction of every tensor-parallel all-reduce.
  std::shared_ptr<const MeasuredCurve> all_reduce_curve = nullptr;
  /// Whether an EP group of `gpus` GPUs is costed on the graph.
  bool uses_graph(int gpus) const {
    return model == CollectiveModelKind::graph || (model == CollectiveModelKind::automatic && gpus <= graph_max_gpus);
  }
};

struct HardwareConfig {
  GpuSpec gpu;
  ClusterSpec cluster;
  VariabilityConfig variability;
  CollectiveConfig collectives;
  EpCommConfig comm;                         ///< [communication]
  std::optional<EpCommConfig> prefill_comm;  ///< [communication.prefill]: the prefill pool's, when given
};

/// Reads and finishes [cluster] (its preset first: it names the default GPU), [gpu] and [communication]
/// of `root`.
HardwareConfig parse_hardware_sections(core::ParamTable& root);

}  // namespace epsim::hardware
