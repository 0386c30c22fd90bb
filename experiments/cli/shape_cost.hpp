// SPDX-License-Identifier: Apache-2.0
#pragma once
// `epsim cost --op OP --shape KEY=VALUES...`: one kernel of any shape, priced as a run prices it, so a
// user can hold the cost model against a kernel benchmark row by row. OP is a kernel op of the
// measurement table (calibration/measurement_table.hpp) and the keys are its shape columns; each row is
// built as a calibration::Measurement and checked as the table checks its rows, then turned into work
// by calibration::kernel_work (expert_ffn: active experts expected under uniform routing unless given,
// each active expert's share of the pairs padded to the tile). Priced on `--gpu NAME|FILE.toml` at
// `--speed`, or on GPU `--gpu-index` of an experiment by its run's cost model. Usage errors are
// std::invalid_argument naming the option.
#include <iosfwd>
#include <string>
#include <vector>

#include "calibration/measured_work.hpp"
#include "calibration/measurement_table.hpp"
#include "hardware/cost_model.hpp"
#include "hardware/gpu_spec.hpp"

namespace epsim::experiments {

struct ShapeRequest {
  calibration::MeasuredOp op = calibration::MeasuredOp::dense_gemm;
  std::vector<calibration::Measurement> rows;  ///< one per value of the swept key
  std::string sweep;                           ///< the key that lists values ("" = one row)
};

/// `--op` and the `--shape` KEY=VALUES assignments as rows labelled with GPU `gpu`; dtype defaults to
/// bf16 (as the table's empty cell). One key may list comma-separated values.
ShapeRequest parse_shape_request(const std::string& op, const std::vector<std::string>& shapes, const std::string& gpu);

struct ShapeRow {
  calibration::Measurement shape;
  double pairs = 0.0;   ///< expert_ffn: tokens x top_k
  double active = 0.0;  ///< expert_ffn: active experts (given, else expected)
  double padded = 0.0;  ///< expert_ffn: tokens after padding to the tile
  double flops = 0.0;
  double bytes = 0.0;
  calibration::Regime regime = calibration::Regime::memory;
  double latency_us = 0.0;
};

/// Each row on GPU `gpu_index` of `cost`, whose GPU is `spec` (its tile rule and roofline regimes).
std::vector<ShapeRow> price_shapes(const ShapeRequest& r, const hardware::CostModel& cost,
                                   const hardware::GpuSpec& spec, int gpu_index);

/// The rows as a table (a header line saying what was priced) or CSV.
std::string shape_table(const ShapeRequest& r, const std::vector<ShapeRow>& rows, const hardware::GpuSpec& spec,
                        double speed, bool csv);

/// Whether `epsim cost` arguments ask for one kernel shape (--op given).
bool wants_shape(const std::vector<std::string>& args);

/// `epsim cost --op ...`: parses, prices, prints. Writes config warnings to `err`.
int shape_cost_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

/// The shape mode's part of `epsim cost --help`.
std::string shape_cost_help();

}  // namespace epsim::experiments
