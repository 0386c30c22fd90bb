// SPDX-License-Identifier: Apache-2.0
#pragma once
// vLLM. Upstream vLLM (see docs/engines.md for the commit read) loads no placement file: its EPLB state
// (vllm/distributed/eplb/eplb_state.py) is built at start-up from the linear placement and rebalanced in
// place. Two files are written for it:
//   "vllm":       the three EplbState tensors as nested lists, per MoE layer: physical_to_logical_map
//                 [layers][slots], logical_to_physical_map [layers][experts][max replicas] (-1 padded to the
//                 widest layer), logical_replica_count [layers][experts];
//   "vllm-slots": the [MoE layers][slots] list of logical expert ids that vLLM's open placement-file work
//                 reads (slot s on EP rank s / (slots / ep_size)).
#include <nlohmann/json.hpp>

#include "engines/placement_formats.hpp"

namespace epsim::engines {

/// The three maps of DeepSeek's EPLB (and vLLM's EplbState) as nested lists, one row per MoE layer:
/// phy2log [slots], log2phy [experts][the widest layer's replicas] padded with -1, logcnt [experts].
/// Empty slots stay -1 (epsim's own format keeps them; the engines' writers refuse them first).
struct EplbMaps {
  nlohmann::ordered_json phy2log = nlohmann::ordered_json::array();
  nlohmann::ordered_json log2phy = nlohmann::ordered_json::array();
  nlohmann::ordered_json logcnt = nlohmann::ordered_json::array();
};
EplbMaps eplb_maps(const policies::Placement& p);

std::string write_vllm_eplb_state(const PlacementExport& x);
policies::Placement read_vllm_eplb_state(const std::string& text, const LayerLayout& layout, int num_experts,
                                         int num_gpus, const std::string& where);
std::string write_vllm_slots(const PlacementExport& x);
policies::Placement read_vllm_slots(const std::string& text, const LayerLayout& layout, int num_experts, int num_gpus,
                                    const std::string& where);

}  // namespace epsim::engines
