// SPDX-License-Identifier: Apache-2.0
#pragma once
// The accuracy suite's figures priced by epsim: a point's run (one simulation of its config, its steps
// filtered as the figure says, or one of its metrics), `epsim cost` at the figure's arguments, or every
// row of a measurement table priced as `epsim calibrate check` prices it. A figure that cannot be priced
// (no step passed its filter, an unknown metric) is an error naming the point and the figure, never a
// silent zero.
#include <string>
#include <vector>

#include "experiments/cli/accuracy_suite.hpp"

namespace epsim::experiments {

/// One published figure beside epsim's prediction of it.
struct FigureResult {
  std::string point;
  std::string gpu;
  PointPhase phase = PointPhase::decode;
  std::string figure;
  double published = 0.0;
  double predicted = 0.0;
  Sample sample = Sample::out;
  Quantity quantity = Quantity::other;
  std::string family;  ///< kernel family, collective, or the run figure's measure
  std::string regime;  ///< kernels: memory / knee / compute; collectives: latency / bandwidth; "" otherwise
  std::string table;   ///< a row of a measurement table: the profile figure's name ("" otherwise)

  /// (predicted - published) / published, percent.
  double error_pct() const { return 100.0 * (predicted - published) / published; }
};

/// Every figure of `point` (a profile figure gives one result per table row), in the point's order.
/// Throws core::Error naming the point's file and the figure when one cannot be priced.
std::vector<FigureResult> price_point(const PointSpec& point, const SuiteFiles& files);

}  // namespace epsim::experiments
