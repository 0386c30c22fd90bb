// SPDX-License-Identifier: Apache-2.0
#pragma once
// The placement files serving engines load, as a registry: format name -> the engine option that reads it,
// a writer from an epsim placement, and a reader back (round-trip tests, `epsim place --check`). Adding a
// format is one entry here and its engines/<engine>_placement.{hpp,cpp}.
#include <span>
#include <string>
#include <string_view>

#include "engines/layer_layout.hpp"
#include "engines/load_history.hpp"
#include "policies/placement.hpp"

namespace epsim::engines {

/// What a writer sees: the placement (one entry per MoE layer), the model's layer numbering, and the loads
/// it was made from ([MoE layer][expert]; the logical-count forms write these instead of slots).
struct PlacementExport {
  const policies::Placement& placement;
  const LayerLayout& layout;
  const LoadMatrix& load;
};

using PlacementWriter = std::string (*)(const PlacementExport& x);
/// Parses `text` (from `where`) into a placement of layout.num_moe_layers() layers of `num_experts` experts
/// on `num_gpus` GPUs;
/// throws core::Error naming `where` and the layer or key on anything that does not fit.
using PlacementReader = policies::Placement (*)(const std::string& text, const LayerLayout& layout, int num_experts,
                                                int num_gpus, const std::string& where);

struct PlacementFormat {
  std::string_view name;
  std::string_view loader;  ///< the engine and the option that loads the file
  std::string_view description;
  bool hidden_layer_ids = false;  ///< numbers layers by hidden layer (a model is needed to write it)
  PlacementWriter write = nullptr;
  PlacementReader read = nullptr;  ///< null: the file holds loads, not a placement
  /// The engine keeps one slot per expert and device: two replicas of an expert on one GPU are refused
  /// (`epsim place` then runs EPLB's distinct variant).
  bool one_replica_per_device = false;
};

std::span<const PlacementFormat> placement_formats();
/// The format called `name`, or null.
const PlacementFormat* find_placement_format(std::string_view name);
/// "a, b or c": the registered names, for messages.
std::string placement_format_names();

/// Engines fill every slot: throws core::Error naming `format`, the MoE layer and the slot when a layer
/// leaves one empty (-1).
void require_full_slots(const policies::Placement& p, std::string_view format);
/// Checks one layer's slots (`where` names the layer) and builds it: slots divide evenly over the GPUs,
/// every id in [0, experts), every expert present at least once.
policies::LayerPlacement checked_layer(std::vector<int> phy2log, int num_experts, int num_gpus,
                                       const std::string& where);

}  // namespace epsim::engines
