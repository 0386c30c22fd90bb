// SPDX-License-Identifier: Apache-2.0
#pragma once
// SGLang's --init-expert-location file (python/sglang/srt/eplb/expert_location.py; docs/engines.md names
// the commit). Its rows are hidden layers, dense ones included (61 for DeepSeek-V3, of which 58 are MoE);
// slot s of a row is on EP rank s / (R / ep_size), R = logical experts + ep_num_redundant_experts.
//   "sglang":               {"physical_to_logical_map": [[logical expert per slot] per hidden layer]}; the
//                           file may hold no other key (SGLang passes its keys as keyword arguments). A dense
//                           layer's row is the trivial arange(R) % experts SGLang builds itself.
//   "sglang-logical-count": {"logical_count": [[tokens per logical expert] per hidden layer]} (dense rows 0);
//                           SGLang then places with its own EPLB (--eplb-algorithm).
#include "engines/placement_formats.hpp"

namespace epsim::engines {

std::string write_sglang_map(const PlacementExport& x);
policies::Placement read_sglang_map(const std::string& text, const LayerLayout& layout, int num_experts, int num_gpus,
                                    const std::string& where);
std::string write_sglang_logical_count(const PlacementExport& x);

}  // namespace epsim::engines
