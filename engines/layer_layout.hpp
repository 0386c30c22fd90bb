// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which hidden layers of a model are MoE layers. Engines number layers differently: SGLang and TensorRT-LLM
// by hidden layer (DeepSeek-V3's MoE layers are 3..60 of 61), vLLM and vllm-ascend by MoE layer (0..57);
// epsim's placements and traces hold MoE layers only.
#include <cstdint>
#include <vector>

#include "models/model_spec.hpp"

namespace epsim::engines {

struct LayerLayout {
  int hidden_layers = 0;        ///< every transformer block, dense or MoE
  std::vector<int> moe_layers;  ///< hidden-layer id of each MoE layer, ascending

  int num_moe_layers() const { return static_cast<int>(moe_layers.size()); }
  /// The MoE index of hidden layer `hidden`, or -1 for a dense layer (or one out of range).
  int moe_index(int hidden) const;
};

/// The model's layout (models::ModelSpec::is_moe_layer).
LayerLayout layer_layout(const models::ModelSpec& model);
/// A layout with no dense layers: `moe_layers` hidden layers, all MoE (when no model is named).
LayerLayout all_moe_layout(int moe_layers);

}  // namespace epsim::engines
