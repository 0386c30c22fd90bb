// SPDX-License-Identifier: Apache-2.0
#pragma once
// The measurement table: one row per measured kernel or collective, the tidy CSV users' scripts, the
// importers (calibration/importers.hpp) and tools/profile/ write, and `epsim calibrate fit|check` read.
// Column names are fixed (docs/calibration.md): `gpu`, `op`, the shape columns the op needs,
// `latency_us`, optional `gpu_id`. Columns the table does not know are kept, in order, and written back.
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hardware/kernel_work.hpp"

namespace epsim::calibration {

/// What a row measured. Kernels map to a hardware::OpKind; collectives are priced by the network model.
enum class MeasuredOp : std::uint8_t {
  expert_ffn,
  dense_gemm,
  attention_prefill,
  attention_decode,
  all_to_all,
  all_reduce,
  send_recv,
};

/// One entry of the op registry: its name in the table and the shape columns a row of it must carry.
struct OpInfo {
  MeasuredOp op;
  std::string_view name;
  bool collective;
  std::span<const std::string_view> required;  ///< shape columns (besides gpu, op, latency_us)
};

/// Every op the table knows, in enum order (the registry: adding an op is one entry here).
std::span<const OpInfo> measured_ops();
const OpInfo& op_info(MeasuredOp op);
std::string_view op_name(MeasuredOp op);
/// The op named `name`, or false.
bool parse_op(std::string_view name, MeasuredOp& op);
/// The kernel family a kernel op is priced as (expert_ffn -> expert_ffn, ...); collectives have none.
bool kernel_kind(MeasuredOp op, hardware::OpKind& kind);

/// One measured row. Shape fields the op does not use stay 0 (and are written as empty cells).
struct Measurement {
  std::string gpu;  ///< a GPU preset name, a calibrated preset file, or a free label
  int gpu_id = -1;  ///< physical GPU the row was measured on; -1 = not given
  MeasuredOp op = MeasuredOp::dense_gemm;
  // expert_ffn
  std::int64_t tokens = 0;          ///< tokens entering the MoE layer (each goes to top_k experts)
  std::int64_t experts = 0;         ///< experts resident on the GPU
  std::int64_t top_k = 0;           ///< experts per token
  std::int64_t active_experts = 0;  ///< experts that received a token; 0 = not given (expected value)
  std::int64_t hidden = 0;
  std::int64_t intermediate = 0;  ///< the expert's (moe) intermediate size; SwiGLU gate, up, down
  // dense_gemm: (m x k) by (k x n)
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  // attention
  std::int64_t batch = 0;      ///< sequences
  std::int64_t q_tokens = 0;   ///< new (query) tokens per sequence
  std::int64_t kv_tokens = 0;  ///< keys per sequence: the context the queries see, new tokens included
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;
  std::int64_t head_dim = 0;
  bool causal = true;  ///< attention: causal mask (optional column `causal`, 1 or 0; default 1)
  /// dense_gemm: independent GEMMs of m x n x k in one grouped call, each with its own weight (optional
  /// column `groups`; default 1), as DeepGEMM's grouped kernels run MoE experts.
  std::int64_t groups = 1;
  hardware::Precision dtype = hardware::Precision::bf16;
  // collectives
  double bytes = 0.0;  ///< message size per GPU (nccl-tests' "size")
  int gpus = 0;
  int gpus_per_node = 0;
  std::string cluster;  ///< cluster preset the collective ran on (optional)
  /// The kernel as recorded (optional column `kernel`, e.g. flash_attn_3, deepgemm_fp8_gemm_nt): its
  /// library (hardware::library_of_kernel) is what the fitted efficiencies describe.
  std::string kernel;

  double latency_us = 0.0;
  std::vector<std::string> extra;  ///< the cells of the table's unknown columns, in their order
  std::int64_t line = 0;           ///< line in the source file (0 = made in memory)
};

struct MeasurementTable {
  std::vector<std::string> extra_columns;  ///< unknown columns, in file order
  std::vector<Measurement> rows;
};

/// The integer shape field of column `col` (tokens, experts, ..., head_dim), or null for any other
/// column (dtype, bytes, gpus, ... are not integer shape fields of this kind).
std::int64_t Measurement::*shape_member(std::string_view col);

/// The table's known columns, in the order the writer puts them.
std::span<const std::string_view> known_columns();

/// Parses a table; `source` names it in errors ("FILE:LINE: column 'hidden': expected ..."). Lines that
/// start with '#' and blank lines are skipped. Throws core::Error on any bad cell, a missing required
/// column or shape value, an unknown op or dtype.
MeasurementTable parse_measurement_table(std::string_view text, const std::string& source);
/// Reads and parses a file (core::Error naming it if it cannot be read).
MeasurementTable read_measurement_table(const std::filesystem::path& path);

/// The table as CSV: the known columns, then the extra ones, then `added` columns with one cell per row
/// each (e.g. predicted_us from `calibrate check`; `added_cells[c][r]`).
std::string format_measurement_table(const MeasurementTable& t, std::span<const std::string> added = {},
                                     std::span<const std::vector<std::string>> added_cells = {});

/// The rows of GPU label `label`, or of the table's only label when `label` is empty. Throws core::Error
/// naming `source` when the table has several labels and none is picked (`option` says how to pick one,
/// e.g. "--label"), or no row of `label`.
std::vector<Measurement> rows_of_label(const MeasurementTable& table, const std::string& label,
                                       const std::string& source, std::string_view option);

/// Checks one row's shape as the parser does (importers build rows in memory); throws core::Error that
/// starts with `where`.
void validate_measurement(const Measurement& m, const std::string& where);

}  // namespace epsim::calibration
