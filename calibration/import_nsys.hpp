// SPDX-License-Identifier: Apache-2.0
#pragma once
// Importer of `nsys stats --format csv` reports, told apart by their header:
// - nvtx_gpu_proj_trace: NVTX ranges projected onto the GPU. Ranges named "epsim:OP key=value ..."
//   (e.g. "epsim:expert_ffn tokens=64 experts=8 top_k=2 hidden=4096 intermediate=14336 dtype=bf16") carry
//   their own op and shape; each distinct name gives one row, the median of its projected durations.
// - cuda_gpu_kern_sum (one line per kernel name) and cuda_gpu_trace (one line per launch): no shapes, so
//   --kernel SUBSTRING picks the kernels of one op call, --op and --shape say what they computed; one row.
//   Per kernel name the median is used ("Med" column, or the median of the traced durations), the average
//   where the report has no median. A call runs the least frequent picked kernel once, so its time is the
//   sum over picked kernels of median x instances / (instances of the least frequent).
// Times are read in the unit the header names ((ns), (us), (ms), (s)).
#include <filesystem>
#include <span>

#include "calibration/import_options.hpp"
#include "calibration/measurement_table.hpp"

namespace epsim::calibration {

MeasurementTable import_nsys(std::span<const std::filesystem::path> files, const ImportOptions& o);

}  // namespace epsim::calibration
