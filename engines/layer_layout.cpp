// SPDX-License-Identifier: Apache-2.0
#include "engines/layer_layout.hpp"

#include <algorithm>

namespace epsim::engines {

int LayerLayout::moe_index(int hidden) const {
  const auto it = std::lower_bound(moe_layers.begin(), moe_layers.end(), hidden);
  return it != moe_layers.end() && *it == hidden ? static_cast<int>(it - moe_layers.begin()) : -1;
}

LayerLayout layer_layout(const models::ModelSpec& model) {
  LayerLayout l;
  l.hidden_layers = static_cast<int>(model.num_layers);
  for (std::int64_t h = 0; h < model.num_layers; ++h) {
    if (model.is_moe_layer(h)) {
      l.moe_layers.push_back(static_cast<int>(h));
    }
  }
  return l;
}

LayerLayout all_moe_layout(int moe_layers) {
  LayerLayout l;
  l.hidden_layers = moe_layers;
  l.moe_layers.resize(static_cast<std::size_t>(moe_layers));
  for (int i = 0; i < moe_layers; ++i) {
    l.moe_layers[static_cast<std::size_t>(i)] = i;
  }
  return l;
}

}  // namespace epsim::engines
