// SPDX-License-Identifier: Apache-2.0
#include "policies/gem/gem_cost_table.hpp"

namespace epsim::policies {

GemCostTable::GemCostTable(const CostCurves& curves, int gpus, std::size_t levels)
    : curves_(&curves), gpus_(gpus), levels_(levels) {}

bool GemCostTable::cover(std::size_t width) {
  const std::size_t row = static_cast<std::size_t>(gpus_) * levels_;
  if (width <= width_) {
    return true;
  }
  if (width * row > k_max_entries) {
    return false;
  }
  const bool aware = curves_->activation_aware();
  for (std::size_t k = width_; k < width; ++k) {
    const auto tokens = static_cast<double>(k);
    for (int g = 0; g < gpus_; ++g) {
      for (std::size_t level = 0; level < levels_; ++level) {
        table_.push_back(aware ? curves_->ns(g, tokens, static_cast<double>(level)) : curves_->ns(g, tokens));
      }
    }
  }
  width_ = width;
  return true;
}

}  // namespace epsim::policies
