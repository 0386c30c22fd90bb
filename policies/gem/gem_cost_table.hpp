// SPDX-License-Identifier: Apache-2.0
#pragma once
// GEM's table of C_g(n, a) at whole token counts. It depends only on the curves, the GPUs and the
// activation levels, not on the layer, so one table serves every layer of a placement: it grows to the
// widest layer's reach and each entry is evaluated once (rebuilding it per layer was a quarter of GEM).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "policies/cost_curves.hpp"

namespace epsim::policies {

class GemCostTable {
 public:
  /// `levels` activation levels per GPU (0..levels-1 activated experts) for activation-aware curves;
  /// token-only curves use one level.
  GemCostTable(const CostCurves& curves, int gpus, std::size_t levels);

  /// The most entries a table may hold (token counts x GPUs x levels).
  static constexpr std::size_t k_max_entries = std::size_t{1} << 24;

  /// Whether this table answers for a layer problem on these curves, GPUs and levels.
  bool serves(const CostCurves* curves, int gpus, std::size_t levels) const {
    return curves == curves_ && gpus == gpus_ && levels == levels_;
  }
  /// Makes token counts 0..width-1 available, evaluating only the new ones; false (and no change) when
  /// that would exceed k_max_entries.
  bool cover(std::size_t width);
  std::size_t width() const { return width_; }
  /// C_g(tokens, level) for tokens < width().
  double at(int g, std::size_t level, std::size_t tokens) const {
    return table_[(static_cast<std::size_t>(g) * levels_ + level) * stride_ + tokens];
  }
  /// GPU g's rows: C_g(tokens, level) is gpu_rows(g)[level * stride() + tokens] for tokens < width().
  const double* gpu_rows(int g) const { return table_.data() + static_cast<std::size_t>(g) * levels_ * stride_; }
  std::size_t stride() const { return stride_; }
  /// Curve evaluations made so far (each entry once).
  std::int64_t evaluations() const { return evaluations_; }

 private:
  const CostCurves* curves_;
  int gpus_;
  std::size_t levels_;
  std::size_t width_ = 0;
  std::size_t stride_ = 0;  // capacity of each (g, level) row; rows grow geometrically, moved not re-evaluated
  std::int64_t evaluations_ = 0;
  std::vector<double> table_;  // [g][level][tokens]: a GPU's nearby loads read nearby entries
};

}  // namespace epsim::policies
