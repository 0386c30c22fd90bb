// SPDX-License-Identifier: Apache-2.0
#pragma once
// Measured tables as a run's cost model, the [calibration] section of an experiment:
//   [calibration]
//   table = "data/profiles/my-h100.csv"   # a measurement table (docs/calibration.md)
//   label = "h100"                        # its rows of this `gpu` label (default: its only label)
//   ops = ["expert_ffn", "all_to_all"]    # what it prices (default: every kernel family it has rows of,
//                                         # EP exchanges from all_to_all rows, TP all-reduces from
//                                         # all_reduce rows inside a node)
// Kernels of those families cost what the table measured (interpolated; the roofline's shape, scaled to
// meet the table, beyond its range) on the GPUs of the experiment's GPU model, in the run and in the cost
// curves the policies see; all_to_all rows correct every EP dispatch and combine the same way, all_reduce
// rows every tensor-parallel all-reduce.
#include <memory>
#include <string>
#include <vector>

#include "calibration/measurement_table.hpp"
#include "core/params.hpp"
#include "hardware/measured_cost_model.hpp"

namespace epsim::experiments {

struct ExperimentConfig;

struct MeasuredCostConfig {
  std::string table;  ///< empty = no measured table: the roofline alone
  std::string label;
  std::vector<calibration::MeasuredOp> ops;
  /// Built when the config is loaded (so a bad table fails there, naming the file and line); the
  /// collectives' curves go into the experiment's CollectiveConfig.
  hardware::KernelCurves kernel_curves;
};

/// Parses [calibration] of `root` (its table is read and checked in build_measured_cost).
MeasuredCostConfig parse_measured_cost_section(core::ParamTable& root);

/// Reads the table and builds the curves for `cfg`'s GPU, model and cluster into cfg.measured (and the
/// collectives' curves into cfg.collectives); warnings go to cfg.warnings.
void build_measured_cost(ExperimentConfig& cfg);

/// The run's cost model: the roofline of builders.hpp, with the measured curves when the config has any.
std::unique_ptr<hardware::CostModel> with_measured_cost(const ExperimentConfig& cfg,
                                                        std::unique_ptr<hardware::RooflineCostModel> roofline);

}  // namespace epsim::experiments
