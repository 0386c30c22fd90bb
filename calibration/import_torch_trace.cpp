// SPDX-License-Identifier: Apache-2.0
#include "calibration/import_torch_trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>

#include "core/error.hpp"
#include "core/json_depth.hpp"

namespace epsim::calibration {
namespace {

using nlohmann::json;
using Dims = std::vector<std::vector<std::int64_t>>;

// A CPU op of the trace (cat "cpu_op").
struct CpuOp {
  std::size_t event = 0;  // index in traceEvents
  std::string name;
  double ts = 0.0;
  double end = 0.0;
  std::string thread;  // "pid/tid"
  long parent = -1;    // enclosing op on the same thread, index into the ops
  bool moe = false;    // holds a fused_moe kernel and its inputs read as a MoE layer
};

// A GPU kernel (cat "kernel").
struct Kernel {
  std::size_t event = 0;
  std::string name;
  double dur = 0.0;
  long op = -1;  // the CPU op that launched it
  int device = -1;
};

enum class OpKind : std::uint8_t { none, gemm, attention_bhsd, attention_bshd };

OpKind kind_of(std::string_view name) {
  for (const std::string_view g : {"aten::mm", "aten::addmm", "aten::matmul", "aten::linear"}) {
    if (name == g) {
      return OpKind::gemm;
    }
  }
  for (const std::string_view a : {"aten::scaled_dot_product_attention", "_scaled_dot_product_flash_attention",
                                   "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention"}) {
    if (name.find(a) != std::string_view::npos) {
      return OpKind::attention_bhsd;
    }
  }
  return name.find("flash_attn") != std::string_view::npos ? OpKind::attention_bshd : OpKind::none;
}

std::string pointer(const std::string& file, std::size_t event, std::string_view key = {}) {
  return fmt::format("{}: /traceEvents/{}{}{}", file, event, key.empty() ? "" : "/", key);
}

double number_field(const json& e, const char* key, const std::string& where) {
  const auto it = e.find(key);
  if (it == e.end() || !it->is_number()) {
    throw core::Error(fmt::format("{}/{}: expected a number", where, key));
  }
  return it->get<double>();
}

// An integer id from args (External id, correlation, device); -1 when absent.
long long arg_id(const json& e, const char* key) {
  const auto args = e.find("args");
  if (args == e.end() || !args->is_object()) {
    return -1;
  }
  const auto it = args->find(key);
  return it != args->end() && it->is_number_integer() ? it->get<long long>() : -1;
}

Dims input_dims(const json& e) {
  Dims dims;
  const auto args = e.find("args");
  if (args == e.end() || !args->contains("Input Dims") || !(*args)["Input Dims"].is_array()) {
    return dims;
  }
  for (const json& d : (*args)["Input Dims"]) {
    std::vector<std::int64_t> shape;
    if (d.is_array() && std::all_of(d.begin(), d.end(), [](const json& x) { return x.is_number_integer(); })) {
      for (const json& x : d) {
        shape.push_back(x.get<std::int64_t>());
      }
    }
    dims.push_back(std::move(shape));
  }
  return dims;
}

std::string input_type(const json& e, std::size_t i) {
  const auto args = e.find("args");
  if (args == e.end() || !args->contains("Input type")) {
    return {};
  }
  const json& types = (*args)["Input type"];
  return types.is_array() && i < types.size() && types[i].is_string() ? types[i].get<std::string>() : std::string();
}

std::int64_t leading(const std::vector<std::int64_t>& d) {
  return std::accumulate(d.begin(), d.end() - 1, std::int64_t{1}, std::multiplies<>());
}

// m, n, k of a GEMM op from its inputs; false when the dims do not read as one GEMM.
bool gemm_shape(std::string_view name, const Dims& d, Measurement& m, std::size_t& a_input) {
  a_input = name == "aten::addmm" ? 1 : 0;
  if (d.size() < a_input + 2 || d[a_input].size() < 2 || d[a_input + 1].size() != 2) {
    return false;
  }
  const auto& a = d[a_input];
  const auto& b = d[a_input + 1];
  m.m = leading(a);
  m.k = a.back();
  m.n = name == "aten::linear" ? b[0] : b[1];  // linear's weight is [out, in]
  const std::int64_t bk = name == "aten::linear" ? b[1] : b[0];
  return bk == m.k && (a.size() == 2 || name == "aten::matmul" || name == "aten::linear");
}

bool attention_shape(OpKind kind, const Dims& d, Measurement& m) {
  if (d.size() < 2 || d[0].size() != 4 || d[1].size() != 4) {
    return false;
  }
  const bool bhsd = kind == OpKind::attention_bhsd;
  m.batch = d[0][0];
  m.heads = bhsd ? d[0][1] : d[0][2];
  m.q_tokens = bhsd ? d[0][2] : d[0][1];
  m.head_dim = d[0][3];
  m.kv_heads = bhsd ? d[1][1] : d[1][2];
  m.kv_tokens = bhsd ? d[1][2] : d[1][1];
  m.op = m.q_tokens == 1 ? MeasuredOp::attention_decode : MeasuredOp::attention_prefill;
  return true;
}

// hidden states [T, H], w1 [E, 2 I, H], top-k ids [T, k]; the index of w1 (for the dtype) or -1.
long moe_shape(const Dims& d, Measurement& m) {
  if (d.empty() || d[0].size() != 2) {
    return -1;
  }
  m.tokens = d[0][0];
  m.hidden = d[0][1];
  long w1 = -1;
  for (std::size_t i = 1; i < d.size(); ++i) {
    if (w1 < 0 && d[i].size() == 3 && d[i][2] == m.hidden && d[i][1] % 2 == 0) {
      w1 = static_cast<long>(i);
      m.experts = d[i][0];
      m.intermediate = d[i][1] / 2;
    } else if (w1 >= 0 && m.top_k == 0 && d[i].size() == 2 && d[i][0] == m.tokens && d[i][1] <= m.experts) {
      m.top_k = d[i][1];
    }
  }
  m.op = MeasuredOp::expert_ffn;
  return m.top_k > 0 ? w1 : -1;
}

// Links ops to their enclosing op per thread: sorted by start (longer first on ties), a stack of open ops.
void link_parents(std::vector<CpuOp>& ops) {
  std::vector<std::size_t> order(ops.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (ops[a].thread != ops[b].thread) {
      return ops[a].thread < ops[b].thread;
    }
    return ops[a].ts != ops[b].ts ? ops[a].ts < ops[b].ts : ops[a].end > ops[b].end;
  });
  std::vector<std::size_t> open;
  for (const std::size_t i : order) {
    while (!open.empty() && (ops[open.back()].thread != ops[i].thread || ops[open.back()].end < ops[i].end)) {
      open.pop_back();
    }
    ops[i].parent = open.empty() ? -1 : static_cast<long>(open.back());
    open.push_back(i);
  }
}

struct Trace {
  std::vector<CpuOp> ops;
  std::vector<Kernel> kernels;
  std::map<int, std::string> devices;  // deviceProperties: id -> name
};

Trace read_trace(const json& j, const std::string& file) {
  Trace tr;
  if (!j.is_object() || !j.contains("traceEvents") || !j["traceEvents"].is_array()) {
    throw core::Error(file +
                      ": /traceEvents: expected the array of a Chrome trace (torch.profiler's "
                      "export_chrome_trace)");
  }
  if (j.contains("deviceProperties") && j["deviceProperties"].is_array()) {
    for (const json& d : j["deviceProperties"]) {
      if (d.is_object() && d.contains("id") && d["id"].is_number_integer() && d.contains("name") &&
          d["name"].is_string()) {
        tr.devices[d["id"].get<int>()] = d["name"].get<std::string>();
      }
    }
  }
  const json& events = j["traceEvents"];
  std::map<long long, long> op_of_external;
  std::map<long long, long long> external_of_correlation;  // from the runtime launch events
  for (std::size_t i = 0; i < events.size(); ++i) {
    const json& e = events[i];
    if (!e.is_object() || !e.contains("cat") || !e["cat"].is_string() || e.value("ph", "") != "X") {
      continue;
    }
    const std::string cat = e["cat"].get<std::string>();
    const std::string where = pointer(file, i);
    if (cat == "cpu_op") {
      CpuOp op;
      op.event = i;
      op.name = e.value("name", "");
      op.ts = number_field(e, "ts", where);
      op.end = op.ts + number_field(e, "dur", where);
      op.thread = fmt::format("{}/{}", e.value("pid", json()).dump(), e.value("tid", json()).dump());
      if (const long long ext = arg_id(e, "External id"); ext >= 0) {
        op_of_external.emplace(ext, static_cast<long>(tr.ops.size()));
      }
      tr.ops.push_back(std::move(op));
    } else if (cat == "cuda_runtime" || cat == "cuda_driver") {
      if (const long long c = arg_id(e, "correlation"); c >= 0) {
        external_of_correlation.emplace(c, arg_id(e, "External id"));
      }
    } else if (cat == "kernel") {
      Kernel k;
      k.event = i;
      k.name = e.value("name", "");
      k.dur = number_field(e, "dur", where);
      k.device = static_cast<int>(arg_id(e, "device"));
      long long ext = arg_id(e, "External id");
      if (ext < 0) {
        const auto c = external_of_correlation.find(arg_id(e, "correlation"));
        ext = c == external_of_correlation.end() ? -1 : c->second;
      }
      const auto op = op_of_external.find(ext);
      k.op = op == op_of_external.end() ? -1 : op->second;
      tr.kernels.push_back(std::move(k));
    }
  }
  link_parents(tr.ops);
  return tr;
}

// The outermost op on the kernel's op chain that maps to a measured op; -1 when none does.
long owner(const Trace& tr, long op) {
  long found = -1;
  for (long at = op; at >= 0; at = tr.ops[static_cast<std::size_t>(at)].parent) {
    const CpuOp& c = tr.ops[static_cast<std::size_t>(at)];
    if (c.moe || kind_of(c.name) != OpKind::none) {
      found = at;
    }
  }
  return found;
}

// One trace file's measurements, appended to `t`.
void import_one_trace(const std::filesystem::path& path, const ImportOptions& o, MeasurementTable& t) {
  const std::string file = path.string();
  json j;
  try {
    const std::string text = read_import_file(path);
    core::check_json_depth(text, file);
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw core::Error(fmt::format("{}: byte {}: not JSON: {}", file, e.byte, e.what()));
  } catch (const json::exception& e) {  // valid syntax it cannot hold, as a number past double's range
    throw core::Error(fmt::format("{}: not JSON epsim can read: {}", file, e.what()));
  }
  Trace tr = read_trace(j, file);
  const json& events = j["traceEvents"];
  // Ops above fused_moe kernels whose inputs read as a MoE layer: the outermost such op is the call.
  for (const Kernel& k : tr.kernels) {
    if (k.name.find("fused_moe") == std::string::npos) {
      continue;
    }
    long outer = -1;
    for (long at = k.op; at >= 0; at = tr.ops[static_cast<std::size_t>(at)].parent) {
      Measurement probe;
      if (moe_shape(input_dims(events[tr.ops[static_cast<std::size_t>(at)].event]), probe) >= 0) {
        outer = at;
      }
    }
    if (outer >= 0) {
      tr.ops[static_cast<std::size_t>(outer)].moe = true;
    }
  }
  std::map<long, double> call_us;  // owning op -> its kernels' time
  std::map<long, int> call_device;
  std::vector<std::pair<std::string, long>> skipped;
  const auto skip = [&](const std::string& name) {
    const std::string shown = name.size() > 100 ? name.substr(0, 97) + "..." : name;
    const auto it = std::find_if(skipped.begin(), skipped.end(), [&](const auto& p) { return p.first == shown; });
    if (it == skipped.end()) {
      skipped.emplace_back(shown, 1);
    } else {
      ++it->second;
    }
  };
  for (const Kernel& k : tr.kernels) {
    const long op = owner(tr, k.op);
    if (op < 0) {
      skip(k.op < 0 ? k.name + " (no CPU op)" : k.name);
      continue;
    }
    call_us[op] += k.dur;
    call_device.emplace(op, k.device);
  }
  const std::size_t before = t.rows.size();
  for (const auto& [op_index, us] : call_us) {
    const CpuOp& op = tr.ops[static_cast<std::size_t>(op_index)];
    const json& e = events[op.event];
    const Dims dims = input_dims(e);
    Measurement m;
    std::size_t dtype_input = 0;
    bool ok = false;
    if (op.moe) {
      const long w1 = moe_shape(dims, m);
      ok = w1 >= 0;
      dtype_input = static_cast<std::size_t>(std::max(w1, 0L));
    } else if (const OpKind kind = kind_of(op.name); kind == OpKind::gemm) {
      m.op = MeasuredOp::dense_gemm;
      ok = gemm_shape(op.name, dims, m, dtype_input);
    } else {
      ok = attention_shape(kind, dims, m);
    }
    if (!ok) {
      skip(op.name + (dims.empty() ? " (no \"Input Dims\": profile with record_shapes=True)"
                                   : " (inputs do not read as its shape)"));
      continue;
    }
    const std::string type = input_type(e, dtype_input);
    if (!parse_import_dtype(type, m.dtype)) {
      skip(fmt::format("{} ({} inputs: only 16-bit and fp8 are modelled)", op.name, type.empty() ? "untyped" : type));
      continue;
    }
    const int device = call_device[op_index];
    const auto name = tr.devices.find(device);
    const std::string where = pointer(file, op.event);
    m.gpu = import_gpu(o, name == tr.devices.end() ? std::string() : name->second, where);
    m.gpu_id = o.gpu_id >= 0 ? o.gpu_id : device;
    m.latency_us = us;
    m.line = static_cast<std::int64_t>(op.event);
    validate_measurement(m, fmt::format("{} ({})", where, op.name));
    t.rows.push_back(std::move(m));
  }
  log_skipped(o, file, skipped);
  if (t.rows.size() == before) {
    throw core::Error(file +
                      ": no kernel maps to a measured op (GEMMs, attention, fused MoE with \"Input "
                      "Dims\"; profile with record_shapes=True)");
  }
}

}  // namespace

MeasurementTable import_torch_trace(std::span<const std::filesystem::path> files, const ImportOptions& o) {
  MeasurementTable t;
  for (const std::filesystem::path& path : files) {
    try {
      import_one_trace(path, o, t);
    } catch (const json::exception& e) {  // a value of another type than the trace format's
      throw core::Error(fmt::format("{}: a value has an unexpected JSON type: {}", path.string(), e.what()));
    }
  }
  return t;
}

}  // namespace epsim::calibration
