// SPDX-License-Identifier: Apache-2.0
#include "calibration/import_vidur.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "core/csv_lines.hpp"
#include "core/error.hpp"

namespace epsim::calibration {
namespace {

// One data row of a Vidur CSV, read by column name.
class VidurRow {
 public:
  VidurRow(const std::vector<std::string>& header, const std::vector<std::string>& cells, std::string where)
      : header_(header), cells_(cells), where_(std::move(where)) {}

  bool has(std::string_view col) const { return index(col) < header_.size(); }

  std::int64_t whole(std::string_view col) const {
    const std::string& cell = cell_of(col);
    long long v = 0;
    if (!core::parse_number(cell, v) || v < 0) {
      throw core::Error(fmt::format("{}: column '{}': expected a whole number >= 0, got \"{}\"", where_, col, cell));
    }
    return v;
  }

  bool flag(std::string_view col) const {
    const std::string& cell = cell_of(col);
    if (cell == "True" || cell == "true" || cell == "1") {
      return true;
    }
    if (cell == "False" || cell == "false" || cell == "0") {
      return false;
    }
    throw core::Error(fmt::format("{}: column '{}': expected True or False, got \"{}\"", where_, col, cell));
  }

  /// The op's median (else mean) time in us; 0 when the file has neither or the cell says not measured.
  double time_us(std::string_view op) const {
    for (const char* stat : {"median", "mean"}) {
      const std::string col = fmt::format("time_stats.{}.{}", op, stat);
      if (!has(col)) {
        continue;
      }
      const std::string& cell = cell_of(col);
      double ms = 0.0;
      if (cell.empty()) {
        return 0.0;
      }
      if (!core::parse_number(cell, ms) || ms < 0.0) {
        throw core::Error(fmt::format("{}: column '{}': expected milliseconds >= 0, got \"{}\"", where_, col, cell));
      }
      return ms * 1e3;
    }
    return 0.0;
  }

  const std::string& where() const { return where_; }

 private:
  std::size_t index(std::string_view col) const {
    return static_cast<std::size_t>(std::find(header_.begin(), header_.end(), col) - header_.begin());
  }
  const std::string& cell_of(std::string_view col) const {
    const std::size_t i = index(col);
    if (i >= header_.size()) {
      throw core::Error(fmt::format("{}: the header has no '{}' column", where_, col));
    }
    return cells_[i];
  }

  const std::vector<std::string>& header_;
  const std::vector<std::string>& cells_;
  std::string where_;
};

std::int64_t divide(std::int64_t a, std::int64_t b, const VidurRow& r, std::string_view what) {
  if (b < 1 || a % b != 0) {
    throw core::Error(fmt::format("{}: {} {} is not divisible by {}", r.where(), what, a, b));
  }
  return a / b;
}

void add_row(Measurement m, const ImportOptions& o, const VidurRow& r, std::int64_t line, double us,
             MeasurementTable& t) {
  m.latency_us = us;
  m.gpu = import_gpu(o, "", r.where());
  m.gpu_id = o.gpu_id;
  if (!o.dtype.empty() && !parse_import_dtype(o.dtype, m.dtype)) {
    throw core::Error(fmt::format("--dtype: expected bf16 or fp8, got \"{}\"", o.dtype));
  }
  m.line = line;
  validate_measurement(m, r.where());
  t.rows.push_back(std::move(m));
}

void mlp_rows(const VidurRow& r, const ImportOptions& o, std::int64_t line, MeasurementTable& t) {
  const std::int64_t tp = r.whole("num_tensor_parallel_workers");
  const std::int64_t embd = r.whole("n_embd");
  const std::int64_t heads = r.whole("n_head");
  const std::int64_t expanded = r.whole("n_expanded_embd");
  const std::int64_t d = divide(embd, heads, r, "n_embd");
  const bool gated = !r.has("use_gated_mlp") || r.flag("use_gated_mlp");
  struct Gemm {
    std::string_view op;
    std::int64_t k;
    std::int64_t n;
  };
  const std::array<Gemm, 4> gemms{{
      {"attn_pre_proj", embd, divide((heads + 2 * r.whole("n_kv_head")) * d, tp, r, "QKV width")},
      {"attn_post_proj", divide(heads * d, tp, r, "attention width"), embd},
      {"mlp_up_proj", embd, divide((gated ? 2 : 1) * expanded, tp, r, "MLP up width")},
      {"mlp_down_proj", divide(expanded, tp, r, "n_expanded_embd"), embd},
  }};
  for (const Gemm& g : gemms) {
    const double us = r.time_us(g.op);
    if (us > 0.0) {
      Measurement m;
      m.op = MeasuredOp::dense_gemm;
      m.m = r.whole("num_tokens");
      m.k = g.k;
      m.n = g.n;
      add_row(std::move(m), o, r, line, us, t);
    }
  }
}

void attention_row(const VidurRow& r, const ImportOptions& o, std::int64_t line, MeasurementTable& t) {
  const std::int64_t tp = r.whole("num_tensor_parallel_workers");
  const bool prefill = r.flag("is_prefill");
  const double us = r.time_us(prefill ? "attn_prefill" : "attn_decode");
  if (!(us > 0.0)) {
    return;
  }
  Measurement m;
  m.op = prefill ? MeasuredOp::attention_prefill : MeasuredOp::attention_decode;
  m.heads = divide(r.whole("n_q_head"), tp, r, "n_q_head");
  m.kv_heads = std::max<std::int64_t>(1, r.whole("n_kv_head") / std::max<std::int64_t>(tp, 1));
  m.head_dim = divide(r.whole("n_embd"), r.whole("n_q_head"), r, "n_embd");
  m.batch = r.whole("batch_size");
  m.q_tokens = prefill ? r.whole("prefill_chunk_size") : 1;
  m.kv_tokens = r.whole("kv_cache_size") + m.q_tokens;
  add_row(std::move(m), o, r, line, us, t);
}

}  // namespace

MeasurementTable import_vidur(std::span<const std::filesystem::path> files, const ImportOptions& o) {
  MeasurementTable t;
  for (const std::filesystem::path& path : files) {
    const std::string file = path.string();
    const std::string text = read_import_file(path);
    const std::vector<std::string_view> lines = import_lines(text);
    std::vector<std::string> header;
    std::vector<std::string> cells;
    bool attention = false;
    const std::size_t before = t.rows.size();
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const std::string where = fmt::format("{}:{}", file, i + 1);
      if (lines[i].empty()) {
        continue;
      }
      if (!core::split_csv_quoted(lines[i], cells)) {
        throw core::Error(where + ": a quoted cell is not closed");
      }
      if (header.empty()) {
        header = cells;
        const auto has = [&](std::string_view c) { return std::find(header.begin(), header.end(), c) != header.end(); };
        attention = has("is_prefill");
        if (!attention && !has("n_expanded_embd")) {
          throw core::Error(where +
                            ": expected a Vidur mlp.csv (n_embd, n_expanded_embd, num_tokens, ...) or "
                            "attention.csv (is_prefill, batch_size, kv_cache_size, ...) header");
        }
        continue;
      }
      if (cells.size() != header.size()) {
        throw core::Error(
            fmt::format("{}: expected {} cells as in the header, got {}", where, header.size(), cells.size()));
      }
      const VidurRow row(header, cells, where);
      if (attention) {
        attention_row(row, o, static_cast<std::int64_t>(i + 1), t);
      } else {
        mlp_rows(row, o, static_cast<std::int64_t>(i + 1), t);
      }
    }
    if (t.rows.size() == before) {
      throw core::Error(file + ": no measured rows (no time_stats.<op>.median or .mean above 0)");
    }
  }
  return t;
}

}  // namespace epsim::calibration
