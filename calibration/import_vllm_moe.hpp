// SPDX-License-Identifier: Apache-2.0
#pragma once
// Importer of vLLM's benchmarks/kernels/benchmark_moe.py printout (benchmark mode): per batch size a
// "Batch size: N, config: {...}" line and a "Kernel time: T us" line, the fused MoE layer's time. The
// printout has no shapes: they come from --model (a preset's experts, top-k, hidden, moe intermediate)
// and --shape, sharded as the script shards them: with tensor parallelism the fused w13 is
// [E, 2 I / tp, hidden], so a GPU holds intermediate I / tp; with --enable-expert-parallel (or --ep) the
// experts are split instead. The script's own "Namespace(...)" line gives tp_size / expert parallelism /
// dtype when present.
#include <filesystem>
#include <span>

#include "calibration/import_options.hpp"
#include "calibration/measurement_table.hpp"

namespace epsim::calibration {

/// One expert_ffn row per printed batch size (tokens = batch size); throws core::Error naming file:line.
MeasurementTable import_vllm_moe(std::span<const std::filesystem::path> files, const ImportOptions& o);

}  // namespace epsim::calibration
