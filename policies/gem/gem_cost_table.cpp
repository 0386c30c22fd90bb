// SPDX-License-Identifier: Apache-2.0
#include "policies/gem/gem_cost_table.hpp"

#include <algorithm>

namespace epsim::policies {

GemCostTable::GemCostTable(const CostCurves& curves, int gpus, std::size_t levels)
    : curves_(&curves), gpus_(gpus), levels_(levels) {}

bool GemCostTable::cover(std::size_t width) {
  const std::size_t rows = static_cast<std::size_t>(gpus_) * levels_;
  if (width <= width_) {
    return true;
  }
  if (width * rows > k_max_entries) {
    return false;
  }
  if (width > stride_) {  // move the evaluated entries into rows of a larger capacity
    const std::size_t stride = std::min(std::max(width, 2 * stride_), k_max_entries / rows);
    std::vector<double> grown(stride * rows, 0.0);
    for (std::size_t r = 0; r < rows; ++r) {
      std::copy_n(table_.begin() + static_cast<std::ptrdiff_t>(r * stride_), width_,
                  grown.begin() + static_cast<std::ptrdiff_t>(r * stride));
    }
    table_ = std::move(grown);
    stride_ = stride;
  }
  const bool aware = curves_->activation_aware();
  for (int g = 0; g < gpus_; ++g) {
    for (std::size_t level = 0; level < levels_; ++level) {
      double* row = table_.data() + (static_cast<std::size_t>(g) * levels_ + level) * stride_;
      for (std::size_t k = width_; k < width; ++k) {
        const auto tokens = static_cast<double>(k);
        row[k] = aware ? curves_->ns(g, tokens, static_cast<double>(level)) : curves_->ns(g, tokens);
        ++evaluations_;
      }
    }
  }
  width_ = width;
  return true;
}

}  // namespace epsim::policies
