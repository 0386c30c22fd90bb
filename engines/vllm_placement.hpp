#pragma once
// vLLM. Upstream vLLM (see docs/engines.md for the commit read) loads no placement file: its EPLB state
// (vllm/distributed/eplb/eplb_state.py) is built at start-up from the linear placement and rebalanced in
// place. Two files are written for it:
//   "vllm":       the three EplbState tensors as nested lists, per MoE layer: physical_to_logical_map
//                 [layers][slots], logical_to_physical_map [layers][experts][max replicas] (-1 padded to the
//                 widest layer), logical_replica_count [layers][experts];
//   "vllm-slots": the [MoE layers][slots] list of logical expert ids that vLLM's open placement-file work
//                 reads (slot s on EP rank s / (slots / ep_size)).
#include "engines/placement_formats.hpp"

namespace epsim::engines {

std::string write_vllm_eplb_state(const PlacementExport& x);
policies::Placement read_vllm_eplb_state(const std::string& text, const LayerLayout& layout, int num_experts,
                                         int num_gpus, const std::string& where);
std::string write_vllm_slots(const PlacementExport& x);
policies::Placement read_vllm_slots(const std::string& text, const LayerLayout& layout, int num_experts, int num_gpus,
                                    const std::string& where);

}  // namespace epsim::engines
