// SPDX-License-Identifier: Apache-2.0
#include "engines/routing_importers.hpp"

#include <fmt/format.h>

#include <array>
#include <fstream>

#include "core/error.hpp"
#include "core/named.hpp"
#include "engines/import_trtllm_stats.hpp"
#include "engines/import_vllm_routed.hpp"
#include "engines/layer_layout.hpp"
#include "engines/load_history.hpp"
#include "workloads/trace_io.hpp"

namespace epsim::engines {
namespace {

constexpr std::array k_importers{
    RoutingImporter{"vllm-routed-experts",
                    "vLLM --enable-return-routed-experts responses, one request per JSON line (nested lists or base64 "
                    ".npy) -> per-token trace",
                    import_vllm_routed_experts},
    RoutingImporter{"trtllm-expert-stats",
                    "TensorRT-LLM EXPERT_STATISTIC_PATH directory (meta_info.json, rank*.safetensors) -> per-step "
                    "trace",
                    import_trtllm_expert_stats},
    RoutingImporter{"eplb-load-history",
                    "{\"load_history\": [{\"logical_expert_load\": [L][E]}, ...]} (vLLM/SGLang EPLB loads, the public "
                    "EPLB data; SGLang recorder dumps via tools/sglang) -> per-step trace",
                    import_eplb_load_history},
    RoutingImporter{"epsim-trace", "an epsim routing trace (trace gen, trace convert)", import_epsim_trace},
};

}  // namespace

std::span<const RoutingImporter> routing_importers() {
  return k_importers;
}

const RoutingImporter* find_routing_importer(std::string_view name) {
  return core::find_named<RoutingImporter>(k_importers, name);
}

const RoutingImporter* detect_routing_format(const std::filesystem::path& path) {
  if (std::filesystem::is_directory(path) || path.filename() == "meta_info.json") {
    return find_routing_importer("trtllm-expert-stats");
  }
  std::ifstream in(path, std::ios::binary);
  std::string head(1 << 16, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  if (head.rfind(workloads::k_trace_magic, 0) == 0) {
    return find_routing_importer("epsim-trace");
  }
  if (path.extension() == ".jsonl") {
    return find_routing_importer("vllm-routed-experts");
  }
  if (head.find("\"load_history\"") != std::string::npos) {
    return find_routing_importer("eplb-load-history");
  }
  return nullptr;
}

ImportSummary import_eplb_load_history(const std::filesystem::path& path, const RoutingImportOptions& o,
                                       StepSink& sink) {
  const int top_k = required_top_k(o, "eplb-load-history");
  ImportSummary sum;
  trace::Header h;
  LoadMatrix moe;
  std::optional<LayerLayout> layout;
  if (o.model) {
    layout = layer_layout(*o.model);
  }
  read_load_history(path, [&](std::int64_t i, const LoadMatrix& load) {
    const std::string where = fmt::format("{}: load_history[{}]", path.string(), i);
    const LoadMatrix* rows = &load;
    if (layout && static_cast<int>(load.size()) == layout->hidden_layers &&
        layout->hidden_layers != layout->num_moe_layers()) {
      // SGLang numbers every hidden layer: keep the MoE rows, and the dense ones must be empty.
      moe.clear();
      for (int hl = 0; hl < layout->hidden_layers; ++hl) {
        const auto& row = load[static_cast<std::size_t>(hl)];
        if (layout->moe_index(hl) >= 0) {
          moe.push_back(row);
        } else if (std::any_of(row.begin(), row.end(), [](double x) { return x != 0.0; })) {
          throw core::Error(fmt::format("{}: layer {} is dense in {} but has loads", where, hl, o.model->name));
        }
      }
      rows = &moe;
    }
    if (i == 0) {
      h = recording_header(o, static_cast<std::int64_t>(rows->size()), static_cast<std::int64_t>((*rows)[0].size()),
                           top_k, "eplb-load-history", where);
      h.set_notes(path.filename().string());
      sink.begin(h);
    } else if (rows->size() != h.moe_layers() || (*rows)[0].size() != h.experts()) {
      throw core::Error(fmt::format("{}: {} layers x {} experts, entry 0 has {} x {}", where, rows->size(),
                                    (*rows)[0].size(), h.moe_layers(), h.experts()));
    }
    trace::Step s = counts_step(*rows, i, top_k, where);
    sink.step(s);
    ++sum.steps;
    sum.tokens += s.tokens();
  });
  sum.moe_layers = h.moe_layers();
  sum.experts = h.experts();
  sum.top_k = top_k;
  return sum;
}

ImportSummary import_epsim_trace(const std::filesystem::path& path, const RoutingImportOptions& o, StepSink& sink) {
  workloads::TraceReader reader(path);
  const trace::Header& h = reader.header();
  (void)recording_header(o, h.moe_layers(), h.experts(), static_cast<int>(h.top_k()), h.source(), path.string());
  sink.begin(h);
  ImportSummary sum;
  trace::Step s;
  while (reader.next(s)) {
    sink.step(s);
    ++sum.steps;
    sum.tokens += s.tokens();
  }
  sum.moe_layers = h.moe_layers();
  sum.experts = h.experts();
  sum.top_k = h.top_k();
  return sum;
}

}  // namespace epsim::engines
