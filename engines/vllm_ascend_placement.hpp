// SPDX-License-Identifier: Apache-2.0
#pragma once
// vllm-ascend's static EPLB table, loaded with additional_config {"expert_map_path": "FILE.json"}
// (vllm_ascend/eplb/core/eplb_utils.py; docs/engines.md names the commit):
//   {"moe_layer_count": L, "layer_list": [{"layer_id": m, "device_count": G,
//     "device_list": [{"device_id": g, "device_expert": [logical expert per local slot]}, ...]}, ...]}
// Layers are MoE layers only, in order; devices are EP ranks in order (vllm-ascend reads list positions and
// ignores the ids). A device holding one expert twice loses a slot there, so such placements are refused.
#include "engines/placement_formats.hpp"

namespace epsim::engines {

std::string write_vllm_ascend(const PlacementExport& x);
policies::Placement read_vllm_ascend(const std::string& text, const LayerLayout& layout, int num_experts, int num_gpus,
                                     const std::string& where);

}  // namespace epsim::engines
