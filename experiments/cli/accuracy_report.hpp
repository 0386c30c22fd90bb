// SPDX-License-Identifier: Apache-2.0
#pragma once
// The accuracy suite's results as tables: accuracy.csv (one row per figure; its first seven columns
// `point,gpu,figure,published,predicted,error_pct,sample` are an interface other tools read), the
// terminal table, and the Markdown that docs/accuracy.md shows (scripts/gen-accuracy-doc.sh). Errors
// are summarised per sample (in / out) and quantity, and kernels per family and regime, the way the
// targets are stated: mean absolute percentage error (MAPE), the worst figure, and how many figures
// are inside their target band.
#include <span>
#include <string>
#include <vector>

#include "experiments/cli/accuracy_figures.hpp"
#include "experiments/cli/accuracy_suite.hpp"

namespace epsim::experiments {

/// Figures of one group: their count, MAPE, the error of largest magnitude, and how many are inside
/// the band.
struct ErrorSummary {
  std::size_t figures = 0;
  double mape_pct = 0.0;
  double worst_pct = 0.0;  ///< signed
  std::size_t within = 0;
  double target_pct = 0.0;
};
ErrorSummary summarise(std::span<const FigureResult* const> results);

std::string accuracy_csv(std::span<const FigureResult> results);
/// The terminal table: every figure of a run or a cost, the tables' rows per family and regime, then the
/// summary per sample and quantity.
std::string accuracy_table(std::span<const FigureResult> results);
/// docs/accuracy.md's generated part: summary, figures, tables, and each point's source, what it leaves
/// unstated and what was fitted to it.
std::string accuracy_markdown(std::span<const PointSpec> points, std::span<const FigureResult> results);

}  // namespace epsim::experiments
