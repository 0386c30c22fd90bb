// SPDX-License-Identifier: Apache-2.0
#include "calibration/import_options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <limits>
#include <ostream>
#include <sstream>

#include "core/csv_lines.hpp"
#include "core/error.hpp"

namespace epsim::calibration {

std::string read_import_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw core::Error(fmt::format("{}: cannot read the file to import", path.string()));
  }
  return core::read_whole_input(in, path.string());
}

std::vector<std::string_view> import_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    std::string_view line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    lines.push_back(line);
    pos = end + 1;
  }
  return lines;
}

std::vector<std::string_view> import_words(std::string_view line) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i])) != 0) {
      ++i;
    }
    const std::size_t start = i;
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i])) == 0) {
      ++i;
    }
    if (i > start) {
      words.push_back(line.substr(start, i - start));
    }
  }
  return words;
}

bool parse_import_dtype(std::string_view name, hardware::Precision& p) {
  // 16-bit floats run at the same tensor-core rate, so half counts as bf16 for the roofline.
  for (const std::string_view s : {"bf16", "bfloat16", "c10::BFloat16", "torch.bfloat16", "fp16", "half", "float16",
                                   "c10::Half", "torch.float16"}) {
    if (name == s) {
      p = hardware::Precision::bf16;
      return true;
    }
  }
  for (const std::string_view s :
       {"fp8", "fp8_e4m3", "float8_e4m3fn", "fp8_w8a8", "c10::Float8_e4m3fn", "torch.float8_e4m3fn"}) {
    if (name == s) {
      p = hardware::Precision::fp8;
      return true;
    }
  }
  return false;
}

std::string import_gpu(const ImportOptions& o, const std::string& found, const std::string& where) {
  if (!o.gpu.empty()) {
    return o.gpu;
  }
  if (!found.empty()) {
    return found;
  }
  throw core::Error(where + ": the file names no GPU: give --gpu LABEL (a GPU preset name or a free label)");
}

void set_shape_value(Measurement& m, std::string_view key, std::string_view value, const std::string& where) {
  if (key == "dtype") {
    if (!parse_import_dtype(value, m.dtype)) {
      throw core::Error(fmt::format("{}: shape dtype: expected bf16 or fp8, got \"{}\"", where, value));
    }
    return;
  }
  if (key == "bytes") {
    if (!core::parse_number(std::string(value), m.bytes) || m.bytes <= 0.0) {
      throw core::Error(fmt::format("{}: shape bytes: expected a positive number, got \"{}\"", where, value));
    }
    return;
  }
  long long v = 0;
  if (!core::parse_number(std::string(value), v) || v < 1 || v > std::numeric_limits<int>::max()) {
    throw core::Error(fmt::format("{}: shape {}: expected a positive whole number, got \"{}\"", where, key, value));
  }
  if (std::int64_t Measurement::*member = shape_member(key)) {
    m.*member = v;
    return;
  }
  if (key == "gpus" || key == "gpus_per_node") {
    (key == "gpus" ? m.gpus : m.gpus_per_node) = static_cast<int>(v);
    return;
  }
  throw core::Error(
      fmt::format("{}: unknown shape key \"{}\"; expected a measurement table shape column (tokens, "
                  "experts, top_k, hidden, intermediate, m, n, k, batch, q_tokens, kv_tokens, heads, "
                  "kv_heads, head_dim, dtype, bytes, gpus, gpus_per_node)",
                  where, key));
}

void apply_shape_options(Measurement& m, const ImportOptions& o) {
  for (const auto& [key, value] : o.shape) {
    set_shape_value(m, key, value, "--shape");
  }
}

MeasuredOp import_op(const ImportOptions& o, std::string_view format) {
  MeasuredOp op = MeasuredOp::dense_gemm;
  if (o.op.empty()) {
    throw core::Error(fmt::format("{}: the file does not say what was measured: give --op OP", format));
  }
  if (!parse_op(o.op, op)) {
    throw core::Error(fmt::format("--op: unknown op \"{}\"", o.op));
  }
  return op;
}

void log_skipped(const ImportOptions& o, const std::string& file, std::vector<std::pair<std::string, long>> counts) {
  if (o.log == nullptr || counts.empty()) {
    return;
  }
  std::stable_sort(counts.begin(), counts.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  long total = 0;
  for (const auto& c : counts) {
    total += c.second;
  }
  *o.log << fmt::format("epsim: {}: skipped {} (no measured op maps to them):\n", file, total);
  for (std::size_t i = 0; i < counts.size() && i < 10; ++i) {
    *o.log << fmt::format("  {:>6}  {}\n", counts[i].second, counts[i].first);
  }
  if (counts.size() > 10) {
    *o.log << fmt::format("  ... and {} more names\n", counts.size() - 10);
  }
}

}  // namespace epsim::calibration
