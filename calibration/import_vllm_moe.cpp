// SPDX-License-Identifier: Apache-2.0
#include "calibration/import_vllm_moe.hpp"

#include <fmt/format.h>

#include <optional>

#include "core/csv_lines.hpp"
#include "core/error.hpp"
#include "models/model_spec.hpp"

namespace epsim::calibration {
namespace {

// The value of `key=` in the script's "Namespace(a=1, b='x', ...)" line, quotes dropped; empty if absent.
std::string namespace_value(std::string_view line, std::string_view key) {
  const std::string needle = std::string(key) + "=";
  std::size_t at = line.find(needle);
  // A key must start after "(" or ", " so that e.g. "ep_size=" does not match inside "tp_size=".
  while (at != std::string_view::npos && at > 0 && line[at - 1] != '(' && line[at - 1] != ' ') {
    at = line.find(needle, at + 1);
  }
  if (at == std::string_view::npos) {
    return {};
  }
  std::string_view v = line.substr(at + needle.size());
  v = v.substr(0, std::min(v.find(','), v.find(')')));
  if (v.size() >= 2 && (v.front() == '\'' || v.front() == '"')) {
    v = v.substr(1, v.size() - 2);
  }
  return std::string(v);
}

int positive_int(const std::string& text, const std::string& where, std::string_view what) {
  long long v = 0;
  if (!core::parse_number(text, v) || v < 1 || v > 1 << 20) {
    throw core::Error(fmt::format("{}: {}: expected a positive whole number, got \"{}\"", where, what, text));
  }
  return static_cast<int>(v);
}

// What the Namespace line says about sharding and dtype (fields stay empty when it does not say).
struct PrintedArgs {
  int tp = 0;
  int ep = 0;
  std::string dtype;
  std::string model;
};

PrintedArgs printed_args(std::string_view line, const std::string& where) {
  PrintedArgs a;
  a.model = namespace_value(line, "model");
  a.dtype = namespace_value(line, "dtype");
  if (const std::string tp = namespace_value(line, "tp_size"); !tp.empty()) {
    a.tp = positive_int(tp, where, "tp_size");
  }
  if (const std::string ep = namespace_value(line, "ep_size"); !ep.empty()) {
    a.ep = positive_int(ep, where, "ep_size");
  }
  // vLLM's --enable-expert-parallel splits the experts over the tp_size GPUs and keeps I whole.
  if (namespace_value(line, "enable_expert_parallel") == "True" && a.tp > 0) {
    a.ep = a.tp;
    a.tp = 1;
  }
  return a;
}

// The per-GPU expert shape for one file: model preset, then --shape, then the sharding.
Measurement base_row(const ImportOptions& o, const PrintedArgs& printed, const std::string& where) {
  Measurement m;
  m.op = MeasuredOp::expert_ffn;
  if (!o.model.empty()) {
    const models::ModelSpec spec = models::load_model_preset(o.model);
    m.experts = spec.routed_experts;
    m.top_k = spec.top_k;
    m.hidden = spec.hidden_size;
    m.intermediate = spec.moe_intermediate_size;
  }
  apply_shape_options(m, o);
  if (m.experts < 1 || m.top_k < 1 || m.hidden < 1 || m.intermediate < 1) {
    throw core::Error(
        fmt::format("{}: the printout has no shape{}: give --model PRESET or --shape experts=E top_k=K hidden=H "
                    "intermediate=I (the model's, before sharding)",
                    where, printed.model.empty() ? "" : fmt::format(" (it benchmarked {})", printed.model)));
  }
  const int tp = o.tp > 0 ? o.tp : printed.tp;
  const int ep = o.ep > 0 ? o.ep : std::max(printed.ep, 1);
  if (tp < 1) {
    throw core::Error(where +
                      ": no \"Namespace(... tp_size=N ...)\" line: give --tp N as the benchmark ran "
                      "(benchmark_moe.py's default is 2)");
  }
  if (m.intermediate % tp != 0 || m.experts % ep != 0) {
    throw core::Error(fmt::format("{}: tp {} must divide intermediate {} and ep {} the {} experts", where, tp,
                                  m.intermediate, ep, m.experts));
  }
  m.intermediate /= tp;  // the fused w13 is [E, 2 I / tp, hidden]: each GPU computes I / tp of every expert
  m.experts /= ep;
  std::string dtype = o.dtype.empty() ? printed.dtype : o.dtype;
  if (dtype.empty() || dtype == "auto") {
    dtype = "bf16";  // "auto" runs the model's dtype; the MoE checkpoints benchmarked are bf16
  }
  if (!parse_import_dtype(dtype, m.dtype)) {
    throw core::Error(fmt::format("{}: dtype \"{}\": only bf16 and fp8 (fp8_w8a8) are modelled", where, dtype));
  }
  m.gpu = import_gpu(o, "", where);
  m.gpu_id = o.gpu_id;
  return m;
}

}  // namespace

MeasurementTable import_vllm_moe(std::span<const std::filesystem::path> files, const ImportOptions& o) {
  MeasurementTable t;
  for (const std::filesystem::path& path : files) {
    const std::string file = path.string();
    const std::string text = read_import_file(path);
    const std::vector<std::string_view> lines = import_lines(text);
    PrintedArgs printed;
    std::optional<Measurement> base;
    std::int64_t pending_batch = 0;  // the batch size whose "Kernel time" line comes next
    std::size_t pending_line = 0;
    const std::size_t rows_before = t.rows.size();
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const std::string_view line = lines[i];
      const std::string where = fmt::format("{}:{}", file, i + 1);
      if (line.starts_with("Namespace(")) {
        printed = printed_args(line, where);
        base.reset();
      } else if (line.starts_with("Batch size: ")) {
        if (pending_batch > 0) {
          throw core::Error(
              fmt::format("{}: expected \"Kernel time: T us\" for the batch size of line {}", where, pending_line));
        }
        std::string_view n = line.substr(12);
        n = n.substr(0, n.find(','));
        pending_batch = positive_int(std::string(n), where, "batch size");
        pending_line = i + 1;
      } else if (line.starts_with("Kernel time: ")) {
        std::string_view v = line.substr(13);
        double us = 0.0;
        if (!v.ends_with(" us") || !core::parse_number(std::string(v.substr(0, v.size() - 3)), us) || !(us > 0.0)) {
          throw core::Error(fmt::format("{}: expected \"Kernel time: T us\" with T > 0, got \"{}\"", where, line));
        }
        if (pending_batch == 0) {
          throw core::Error(where + ": a kernel time without a \"Batch size: N, config: ...\" line before it");
        }
        if (!base) {
          base = base_row(o, printed, file);
        }
        Measurement m = *base;
        m.tokens = pending_batch;
        m.latency_us = us;
        m.line = static_cast<std::int64_t>(i + 1);
        validate_measurement(m, where);
        t.rows.push_back(std::move(m));
        pending_batch = 0;
      }
    }
    if (pending_batch > 0) {
      throw core::Error(fmt::format("{}:{}: the batch size has no \"Kernel time: T us\" line", file, pending_line));
    }
    if (t.rows.size() == rows_before) {
      throw core::Error(file +
                        ": no \"Kernel time: T us\" lines: expected benchmark_moe.py's benchmark output "
                        "(a --tune run prints no times)");
    }
  }
  return t;
}

}  // namespace epsim::calibration
