// SPDX-License-Identifier: Apache-2.0
#pragma once
// A measurement table turned into the measured curves a run uses as its cost model
// (hardware/measured_cost_model.hpp, [calibration] of an experiment): per kernel family, the rows'
// measured latencies against their roofline times on the run's GPU; for EP exchanges and tensor-parallel
// all-reduces, the all_to_all and all_reduce rows against the run's collective model. Rows of the run's
// own shapes are preferred: an expert_ffn row matches when its hidden and intermediate sizes and dtype
// are the model's, an attention row when its head dim and kv heads are; when no row matches, every row
// of the family is used and a warning says so.
#include <span>
#include <string>
#include <vector>

#include "calibration/collective_fit.hpp"
#include "calibration/measurement_table.hpp"
#include "hardware/measured_cost_model.hpp"
#include "models/model_spec.hpp"

namespace epsim::calibration {

/// Curves of the kernel families in `ops` (empty: every family the rows have) on `gpu` for `model`.
/// `warnings` gets a line per family that fell back to other shapes; a family in `ops` with no rows is a
/// core::Error naming `source`.
hardware::KernelCurves kernel_curves(std::span<const Measurement> rows, const hardware::GpuSpec& gpu,
                                     const models::ModelSpec& model, std::span<const MeasuredOp> ops,
                                     const std::string& source, std::vector<std::string>& warnings);

/// The curve of the rows of collective `op` (all_to_all: every one; all_reduce: those inside a node, as
/// tensor-parallel all-reduces are), each priced on `cluster` by `price` (null when there are none).
std::shared_ptr<const hardware::MeasuredCurve> collective_curve(std::span<const Measurement> rows, MeasuredOp op,
                                                                const hardware::ClusterSpec& cluster,
                                                                const CollectivePricer& price);

}  // namespace epsim::calibration
