// SPDX-License-Identifier: Apache-2.0
#include "calibration/measurement_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "core/csv_lines.hpp"
#include "core/error.hpp"

namespace epsim::calibration {
namespace {

constexpr std::array<std::string_view, 6> k_expert_cols{"tokens", "experts",      "top_k",
                                                        "hidden", "intermediate", "dtype"};
constexpr std::array<std::string_view, 4> k_gemm_cols{"m", "n", "k", "dtype"};
constexpr std::array<std::string_view, 7> k_attention_cols{"batch",    "q_tokens", "kv_tokens", "heads",
                                                           "kv_heads", "head_dim", "dtype"};
constexpr std::array<std::string_view, 3> k_collective_cols{"bytes", "gpus", "gpus_per_node"};

constexpr std::array<OpInfo, 7> k_ops{{
    {MeasuredOp::expert_ffn, "expert_ffn", false, k_expert_cols},
    {MeasuredOp::dense_gemm, "dense_gemm", false, k_gemm_cols},
    {MeasuredOp::attention_prefill, "attention_prefill", false, k_attention_cols},
    {MeasuredOp::attention_decode, "attention_decode", false, k_attention_cols},
    {MeasuredOp::all_to_all, "all_to_all", true, k_collective_cols},
    {MeasuredOp::all_reduce, "all_reduce", true, k_collective_cols},
    {MeasuredOp::send_recv, "send_recv", true, k_collective_cols},
}};

constexpr std::array<std::string_view, 27> k_columns{
    "gpu",    "gpu_id", "op",    "tokens", "experts",  "top_k",         "active_experts", "hidden",   "intermediate",
    "m",      "n",      "k",     "batch",  "q_tokens", "kv_tokens",     "heads",          "kv_heads", "head_dim",
    "causal", "groups", "dtype", "bytes",  "gpus",     "gpus_per_node", "cluster",        "kernel",   "latency_us"};

bool is_attention(MeasuredOp op) {
  return op == MeasuredOp::attention_prefill || op == MeasuredOp::attention_decode;
}

// The integer shape field of `col` (every caller passes one of shape_member's columns).
std::int64_t Measurement::*checked_member(std::string_view col) {
  std::int64_t Measurement::*member = shape_member(col);
  if (member == nullptr) {
    throw std::logic_error("measurement table: no integer column " + std::string(col));
  }
  return member;
}

std::string dtype_name(hardware::Precision p) {
  return p == hardware::Precision::fp8 ? "fp8" : "bf16";
}

// The value of a shape column as the writer prints it ("" when the op does not use it).
std::string cell_of(const Measurement& m, std::string_view col) {
  const OpInfo& info = op_info(m.op);
  const bool used = col == "active_experts" ? m.active_experts > 0
                    : col == "cluster"      ? !m.cluster.empty()
                                            : [&] {
                                           for (const std::string_view r : info.required) {
                                             if (r == col) {
                                               return true;
                                             }
                                           }
                                           return false;
                                         }();
  if (col == "gpu" || col == "kernel") {
    return core::csv_quote(col == "gpu" ? m.gpu : m.kernel);
  }
  if (col == "gpu_id") {
    return m.gpu_id >= 0 ? std::to_string(m.gpu_id) : std::string();
  }
  if (col == "op") {
    return std::string(info.name);
  }
  if (col == "latency_us") {
    return fmt::format("{}", m.latency_us);
  }
  if (col == "causal") {
    return is_attention(m.op) ? (m.causal ? "1" : "0") : std::string();
  }
  if (col == "groups") {
    return m.op == MeasuredOp::dense_gemm && m.groups > 1 ? std::to_string(m.groups) : std::string();
  }
  if (!used) {
    return {};
  }
  if (col == "dtype") {
    return dtype_name(m.dtype);
  }
  if (col == "bytes") {
    return fmt::format("{}", m.bytes);
  }
  if (col == "gpus") {
    return std::to_string(m.gpus);
  }
  if (col == "gpus_per_node") {
    return std::to_string(m.gpus_per_node);
  }
  if (col == "cluster") {
    return core::csv_quote(m.cluster);
  }
  return std::to_string(m.*checked_member(col));
}

[[noreturn]] void fail_cell(const std::string& where, std::string_view col, const std::string& what) {
  throw core::Error(fmt::format("{}: column '{}': {}", where, col, what));
}

}  // namespace

std::int64_t Measurement::*shape_member(std::string_view col) {
  static const std::map<std::string_view, std::int64_t Measurement::*> k{
      {"tokens", &Measurement::tokens},
      {"experts", &Measurement::experts},
      {"top_k", &Measurement::top_k},
      {"active_experts", &Measurement::active_experts},
      {"hidden", &Measurement::hidden},
      {"intermediate", &Measurement::intermediate},
      {"m", &Measurement::m},
      {"n", &Measurement::n},
      {"k", &Measurement::k},
      {"batch", &Measurement::batch},
      {"q_tokens", &Measurement::q_tokens},
      {"kv_tokens", &Measurement::kv_tokens},
      {"heads", &Measurement::heads},
      {"kv_heads", &Measurement::kv_heads},
      {"head_dim", &Measurement::head_dim}};
  const auto it = k.find(col);
  return it == k.end() ? nullptr : it->second;
}

std::span<const OpInfo> measured_ops() {
  return k_ops;
}

const OpInfo& op_info(MeasuredOp op) {
  return k_ops[static_cast<std::size_t>(op)];
}

std::string_view op_name(MeasuredOp op) {
  return op_info(op).name;
}

bool parse_op(std::string_view name, MeasuredOp& op) {
  for (const OpInfo& i : k_ops) {
    if (i.name == name) {
      op = i.op;
      return true;
    }
  }
  return false;
}

bool kernel_kind(MeasuredOp op, hardware::OpKind& kind) {
  switch (op) {
    case MeasuredOp::expert_ffn:
      kind = hardware::OpKind::expert_ffn;
      return true;
    case MeasuredOp::dense_gemm:
      kind = hardware::OpKind::dense_gemm;
      return true;
    case MeasuredOp::attention_prefill:
      kind = hardware::OpKind::attention_prefill;
      return true;
    case MeasuredOp::attention_decode:
      kind = hardware::OpKind::attention_decode;
      return true;
    default:
      return false;
  }
}

std::span<const std::string_view> known_columns() {
  return k_columns;
}

void validate_measurement(const Measurement& m, const std::string& where) {
  if (m.gpu.empty()) {
    fail_cell(where, "gpu", "expected a GPU preset name, a preset file or a label, got an empty cell");
  }
  if (!(m.latency_us > 0.0) || !std::isfinite(m.latency_us)) {
    fail_cell(where, "latency_us", fmt::format("expected a positive number of microseconds, got {}", m.latency_us));
  }
  const OpInfo& info = op_info(m.op);
  for (const std::string_view col : info.required) {
    if (col == "dtype") {
      continue;
    }
    const double v = col == "bytes"           ? m.bytes
                     : col == "gpus"          ? m.gpus
                     : col == "gpus_per_node" ? m.gpus_per_node
                                              : static_cast<double>(m.*checked_member(col));
    if (!(v > 0.0)) {
      fail_cell(where, col, fmt::format("op {} needs a positive value, got {}", info.name, v));
    }
  }
  if (m.op == MeasuredOp::expert_ffn) {
    if (m.top_k > m.experts) {
      fail_cell(where, "top_k", fmt::format("{} experts per token but only {} experts", m.top_k, m.experts));
    }
    const std::int64_t most = std::min(m.experts, m.tokens * m.top_k);
    if (m.active_experts > most) {
      fail_cell(where, "active_experts",
                fmt::format("at most min(experts, tokens x top_k) = {} experts can be active, got {}", most,
                            m.active_experts));
    }
  }
  if (is_attention(m.op)) {
    if (m.kv_tokens < m.q_tokens) {
      fail_cell(where, "kv_tokens",
                fmt::format("keys per sequence include its {} new tokens, got {}", m.q_tokens, m.kv_tokens));
    }
    if (m.heads % m.kv_heads != 0) {
      fail_cell(where, "kv_heads", fmt::format("{} heads are not a multiple of {} kv_heads", m.heads, m.kv_heads));
    }
  }
  if (info.collective && m.gpus < 2) {
    fail_cell(where, "gpus", fmt::format("a collective needs at least 2 GPUs, got {}", m.gpus));
  }
}

namespace {

// The header's columns: per file column, its index among the known ones or -1 (an extra column).
struct Header {
  std::vector<std::string> names;
  std::vector<int> known;
  bool has(std::string_view col) const { return std::find(names.begin(), names.end(), col) != names.end(); }
};

Header parse_header(const std::vector<std::string>& cells, const std::string& where,
                    std::vector<std::string>& extra_columns) {
  Header h;
  h.names = cells;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (std::find(cells.begin(), cells.begin() + static_cast<std::ptrdiff_t>(i), cells[i]) !=
        cells.begin() + static_cast<std::ptrdiff_t>(i)) {
      throw core::Error(fmt::format("{}: column '{}' appears twice in the header", where, cells[i]));
    }
    const auto it = std::find(k_columns.begin(), k_columns.end(), cells[i]);
    h.known.push_back(it == k_columns.end() ? -1 : static_cast<int>(it - k_columns.begin()));
    if (it == k_columns.end()) {
      extra_columns.push_back(cells[i]);
    }
  }
  for (const std::string_view must : {"gpu", "op", "latency_us"}) {
    if (!h.has(must)) {
      throw core::Error(
          fmt::format("{}: the header has no '{}' column (a measurement table needs gpu, op, latency_us and the "
                      "ops' shape columns; docs/calibration.md)",
                      where, must));
    }
  }
  return h;
}

// One known column's cell into `m` (an empty shape cell stays 0: the op's needs are checked after).
void set_cell(Measurement& m, std::string_view col, const std::string& cell, const std::string& where) {
  if (col == "gpu" || col == "cluster" || col == "kernel") {
    (col == "gpu" ? m.gpu : col == "cluster" ? m.cluster : m.kernel) = cell;
  } else if (col == "op") {
    if (!parse_op(cell, m.op)) {
      std::string valid;
      for (const OpInfo& i : k_ops) {
        valid += (valid.empty() ? "" : ", ") + std::string(i.name);
      }
      fail_cell(where, col, fmt::format("unknown op \"{}\"; valid ops are: {}", cell, valid));
    }
  } else if (col == "dtype") {
    if (cell == "fp8" || cell == "fp8_e4m3" || cell == "float8_e4m3fn") {
      m.dtype = hardware::Precision::fp8;
    } else if (!(cell == "bf16" || cell == "bfloat16" || cell.empty())) {
      fail_cell(where, col, fmt::format("expected bf16 or fp8, got \"{}\"", cell));
    }
  } else if (col == "causal") {
    if (cell == "0" || cell == "false") {
      m.causal = false;
    } else if (!(cell == "1" || cell == "true" || cell.empty())) {
      fail_cell(where, col, fmt::format("expected 1 (a causal mask) or 0, got \"{}\"", cell));
    }
  } else if (col == "groups") {
    long long v = 1;
    if (!cell.empty() && (!core::parse_number(cell, v) || v < 1 || v > (1 << 20))) {
      fail_cell(where, col,
                fmt::format("expected a whole number of GEMMs in the grouped call (1 to 1048576), got \"{}\"", cell));
    }
    m.groups = v;
  } else if (cell.empty()) {
    return;
  } else if (col == "latency_us" || col == "bytes") {
    double v = 0.0;
    if (!core::parse_number(cell, v)) {
      fail_cell(where, col, fmt::format("expected a number, got \"{}\"", cell));
    }
    (col == "bytes" ? m.bytes : m.latency_us) = v;
  } else {
    long long v = 0;
    if (!core::parse_number(cell, v) || v < 0 || v > std::numeric_limits<int>::max()) {
      fail_cell(where, col, fmt::format("expected a whole number >= 0, got \"{}\"", cell));
    }
    if (col == "gpu_id" || col == "gpus" || col == "gpus_per_node") {
      (col == "gpu_id" ? m.gpu_id : col == "gpus" ? m.gpus : m.gpus_per_node) = static_cast<int>(v);
    } else {
      m.*checked_member(col) = v;
    }
  }
}

Measurement parse_row(const Header& h, const std::vector<std::string>& cells, std::int64_t line_no,
                      const std::string& where) {
  if (cells.size() != h.names.size()) {
    throw core::Error(
        fmt::format("{}: expected {} cells as in the header, got {}", where, h.names.size(), cells.size()));
  }
  Measurement m;
  m.line = line_no;
  for (std::size_t c = 0; c < cells.size(); ++c) {
    if (h.known[c] < 0) {
      m.extra.push_back(cells[c]);
    } else {
      set_cell(m, k_columns[static_cast<std::size_t>(h.known[c])], cells[c], where);
    }
  }
  for (const std::string_view col : op_info(m.op).required) {
    if (!h.has(col)) {
      throw core::Error(fmt::format("{}: op {} needs a '{}' column, the header has none", where, op_name(m.op), col));
    }
  }
  validate_measurement(m, where);
  return m;
}

// The text's logical lines: a quoted cell may continue on the next physical line; a trailing '\r' is
// dropped. Each call gives the next line's cells and its first physical line's number.
class LogicalLines {
 public:
  LogicalLines(std::string_view text, const std::string& source) : text_(text), source_(source) {}
  bool next(std::vector<std::string>& cells, std::string& line, std::int64_t& line_no) {
    if (pos_ > text_.size()) {
      return false;
    }
    line.assign(take());
    line_no = line_no_;
    while (!core::split_csv_quoted(line, cells)) {
      if (pos_ > text_.size()) {
        throw core::Error(fmt::format("{}:{}: a quoted cell is not closed", source_, line_no));
      }
      line += "\n";
      line.append(take());
    }
    if (!line.empty() && line.back() == '\r') {
      line.pop_back();
      core::split_csv_quoted(line, cells);
    }
    return true;
  }

 private:
  std::string_view take() {
    const std::size_t end = std::min(text_.find('\n', pos_), text_.size());
    const std::string_view piece = text_.substr(pos_, end - pos_);
    pos_ = end + 1;
    ++line_no_;
    return piece;
  }
  std::string_view text_;
  const std::string& source_;
  std::size_t pos_ = 0;
  std::int64_t line_no_ = 0;
};

}  // namespace

MeasurementTable parse_measurement_table(std::string_view text, const std::string& source) {
  MeasurementTable t;
  std::optional<Header> header;
  LogicalLines lines(text, source);
  std::vector<std::string> cells;
  std::string line;
  std::int64_t line_no = 0;
  while (lines.next(cells, line, line_no)) {
    if (line.empty() || line[0] == '#') {
      continue;
    }
    const std::string where = fmt::format("{}:{}", source, line_no);
    if (!header) {
      header = parse_header(cells, where, t.extra_columns);
    } else {
      t.rows.push_back(parse_row(*header, cells, line_no, where));
    }
  }
  if (!header) {
    throw core::Error(source + ": empty: expected a header line (gpu,op,...,latency_us) and rows");
  }
  return t;
}

std::vector<Measurement> rows_of_label(const MeasurementTable& table, const std::string& label,
                                       const std::string& source, std::string_view option) {
  std::vector<std::string> labels;
  for (const Measurement& m : table.rows) {
    if (std::find(labels.begin(), labels.end(), m.gpu) == labels.end()) {
      labels.push_back(m.gpu);
    }
  }
  if (label.empty() && labels.size() > 1) {
    throw core::Error(
        fmt::format("{} holds rows of several GPUs ({}): pick one with {}", source, fmt::join(labels, ", "), option));
  }
  std::vector<Measurement> rows;
  for (const Measurement& m : table.rows) {
    if (label.empty() || m.gpu == label) {
      rows.push_back(m);
    }
  }
  if (rows.empty()) {
    throw core::Error(
        fmt::format("{}: no rows of GPU \"{}\"; its GPUs are: {}", source, label, fmt::join(labels, ", ")));
  }
  return rows;
}

MeasurementTable read_measurement_table(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw core::Error(fmt::format("{}: cannot read the measurement table", path.string()));
  }
  return parse_measurement_table(core::read_whole_input(in, path.string()), path.string());
}

std::string format_measurement_table(const MeasurementTable& t, std::span<const std::string> added,
                                     std::span<const std::vector<std::string>> added_cells) {
  std::string out;
  auto append_row = [&out](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size(); ++i) {
      out += (i ? "," : "") + cells[i];
    }
    out += '\n';
  };
  std::vector<std::string> cells;
  cells.reserve(k_columns.size() + t.extra_columns.size() + added.size());
  for (const std::string_view c : k_columns) {
    cells.emplace_back(c);
  }
  for (const std::string& c : t.extra_columns) {
    cells.push_back(core::csv_quote(c));
  }
  for (const std::string& c : added) {
    cells.push_back(core::csv_quote(c));
  }
  append_row(cells);
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    const Measurement& m = t.rows[r];
    cells.clear();
    for (const std::string_view c : k_columns) {
      cells.push_back(cell_of(m, c));
    }
    for (std::size_t e = 0; e < t.extra_columns.size(); ++e) {
      cells.push_back(e < m.extra.size() ? core::csv_quote(m.extra[e]) : std::string());
    }
    for (const auto& column : added_cells) {
      cells.push_back(r < column.size() ? core::csv_quote(column[r]) : std::string());
    }
    append_row(cells);
  }
  return out;
}

}  // namespace epsim::calibration
