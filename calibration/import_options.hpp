// SPDX-License-Identifier: Apache-2.0
#pragma once
// What `epsim calibrate import` passes every importer (calibration/importers.hpp): the labels and shapes
// the profilers' files do not carry, and the small helpers the importers share to apply them the same way.
#include <filesystem>
#include <iosfwd>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "calibration/measurement_table.hpp"

namespace epsim::calibration {

struct ImportOptions {
  std::string gpu;    ///< label for every row; empty: the device name the file gives, else an error
  int gpu_id = -1;    ///< physical GPU; -1: the file's device index where it has one
  std::string model;  ///< a model preset (models/presets) giving expert shapes
  int tp = 0;         ///< tensor-parallel degree the benchmark sharded by; 0 = not given
  int ep = 0;         ///< expert-parallel degree; 0 = not given
  std::string dtype;  ///< bf16 or fp8; empty = the file's, else bf16
  std::string op;     ///< a measured op name for formats without one (nsys, nccl-tests)
  std::vector<std::pair<std::string, std::string>> shape;  ///< --shape key=value, in order
  std::string kernel;                                      ///< nsys: only kernels whose name contains this
  std::ostream* log = nullptr;  ///< where importers say what they skipped (stderr in the CLI)
};

/// The whole file (core::Error naming it when it cannot be read).
std::string read_import_file(const std::filesystem::path& path);

/// The lines of `text` without their line breaks (a trailing '\r' dropped); line i is number i + 1.
std::vector<std::string_view> import_lines(std::string_view text);

/// Whitespace-separated words of `line`.
std::vector<std::string_view> import_words(std::string_view line);

/// `name` as bf16 / fp8 (accepting the spellings profilers print); false when it is neither.
bool parse_import_dtype(std::string_view name, hardware::Precision& p);

/// The rows' GPU label: --gpu, else `found` (the file's device name); core::Error at `where` if neither.
std::string import_gpu(const ImportOptions& o, const std::string& found, const std::string& where);

/// Sets one shape column of `m` by its table name (tokens, hidden, m, bytes, gpus, dtype, ...); core::Error
/// at `where` for an unknown key or a bad value.
void set_shape_value(Measurement& m, std::string_view key, std::string_view value, const std::string& where);

/// Applies every --shape key=value to `m`.
void apply_shape_options(Measurement& m, const ImportOptions& o);

/// The --op option as an op; core::Error naming `format` when it is empty or unknown.
MeasuredOp import_op(const ImportOptions& o, std::string_view format);

/// Says on o.log (when set) what was skipped: `counts` by name, the most frequent first, at most 10.
void log_skipped(const ImportOptions& o, const std::string& file, std::vector<std::pair<std::string, long>> counts);

}  // namespace epsim::calibration
