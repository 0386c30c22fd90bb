// SPDX-License-Identifier: Apache-2.0
#pragma once
// A measured correction of a model: measured / modelled time as a function of the modelled time, from
// points (modelled, measured). Between points it is piecewise linear in log-log (points closer than 1 %
// in modelled time are averaged first); beyond the first and last points it holds their ratios, so a
// kernel inside the table's range costs what was measured and one outside it follows the model's shape,
// scaled to meet the table at its edge. Keyed on the modelled time rather than on one shape column, it
// serves every kernel of a family (all token counts, any layer's shape) and every collective size.
#include <cstddef>
#include <utility>
#include <vector>

namespace epsim::hardware {

class MeasuredCurve {
 public:
  MeasuredCurve() = default;
  /// `points`: (modelled ns, measured ns), both > 0, any order.
  explicit MeasuredCurve(std::vector<std::pair<double, double>> points);

  bool empty() const { return log_model_.empty(); }
  std::size_t points() const { return log_model_.size(); }
  /// The modelled-time range the table covers, ns.
  double first_ns() const;
  double last_ns() const;
  /// measured / modelled at `model_ns` (1 when empty).
  double ratio(double model_ns) const;

 private:
  std::vector<double> log_model_;  // ascending
  std::vector<double> log_ratio_;
};

}  // namespace epsim::hardware
