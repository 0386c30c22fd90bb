// SPDX-License-Identifier: Apache-2.0
#pragma once
// Importer of nccl-tests' printout (all_reduce_perf, alltoall_perf, sendrecv_perf): one row per data row,
// bytes = the "size" column, latency_us = the out-of-place time. The op comes from the "# Collective
// test starting: NAME" line newer versions print, else --op; gpus from the "#  Rank N ... on HOST
// device D" lines (gpus_per_node = most ranks on one host), else the "# nThread T nGpus G" line (one
// process). A row whose out-of-place #wrong is not 0 (or N/A) is refused: wrong results are not a
// measurement to calibrate against.
#include <filesystem>
#include <span>

#include "calibration/import_options.hpp"
#include "calibration/measurement_table.hpp"

namespace epsim::calibration {

MeasurementTable import_nccl_tests(std::span<const std::filesystem::path> files, const ImportOptions& o);

}  // namespace epsim::calibration
