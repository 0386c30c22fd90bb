// SPDX-License-Identifier: Apache-2.0
#pragma once
// TensorRT-LLM's MoE load balancer configuration, loaded with `moe_config: {load_balancer: FILE.yaml}` by its
// PyTorch backend (MoeLoadBalancerConfig; docs/engines.md names the files and the commit):
//   num_slots: R                      (slots in all; R % ep_size == 0, slot s on EP rank s / (R / ep_size))
//   initial_global_assignments:       (keyed by absolute hidden-layer id: 3..60 for DeepSeek-V3)
//     3: [expert per slot, R ids, every expert at least once]
//   layer_updates_per_iter: 0         (0 = a static placement: the balancer never moves weights)
// The file may hold no other key: the configuration takes exactly these three.
#include "engines/placement_formats.hpp"

namespace epsim::engines {

std::string write_trtllm_yaml(const PlacementExport& x);
policies::Placement read_trtllm_yaml(const std::string& text, const LayerLayout& layout, int num_experts, int num_gpus,
                                     const std::string& where);

}  // namespace epsim::engines
