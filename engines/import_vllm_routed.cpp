// SPDX-License-Identifier: Apache-2.0
#include "engines/import_vllm_routed.hpp"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/json_depth.hpp"
#include "engines/layer_layout.hpp"
#include "engines/npy.hpp"
#include "workloads/trace_io.hpp"

namespace epsim::engines {
namespace {

// One routing array of a line: [tokens][layers][top_k] flattened, with its shape.
struct Routing {
  std::int64_t tokens = 0;
  std::int64_t layers = 0;
  std::int64_t top_k = 0;
  std::vector<std::int64_t> ids;
};

Routing routing_of(const nlohmann::json& j, const std::string& where) {
  Routing r;
  if (j.is_string()) {
    const NpyArray a = parse_npy(decode_base64(j.get_ref<const std::string&>(), where), where);
    if (a.shape.size() != 3) {
      throw core::Error(
          fmt::format("{}: a {}-dimensional array; expected [tokens][layers][top_k]", where, a.shape.size()));
    }
    r.tokens = a.shape[0];
    r.layers = a.shape[1];
    r.top_k = a.shape[2];
    r.ids = a.values;
    return r;
  }
  if (!j.is_array()) {
    throw core::Error(where + ": expected [tokens][layers][top_k] expert ids (nested lists or base64 .npy)");
  }
  r.tokens = static_cast<std::int64_t>(j.size());
  for (std::size_t t = 0; t < j.size(); ++t) {
    const auto& tok = j[t];
    if (!tok.is_array() || (t > 0 && static_cast<std::int64_t>(tok.size()) != r.layers)) {
      throw core::Error(fmt::format("{}: token {}: expected {} layers of ids", where, t, r.layers));
    }
    r.layers = static_cast<std::int64_t>(tok.size());
    for (std::size_t l = 0; l < tok.size(); ++l) {
      const auto& ids = tok[l];
      if (!ids.is_array() || (r.top_k > 0 && static_cast<std::int64_t>(ids.size()) != r.top_k) || ids.empty()) {
        throw core::Error(fmt::format("{}: token {}, layer {}: expected a list of {} expert ids", where, t, l,
                                      r.top_k > 0 ? fmt::format("{}", r.top_k) : std::string("top_k")));
      }
      r.top_k = static_cast<std::int64_t>(ids.size());
      for (std::size_t k = 0; k < ids.size(); ++k) {
        if (!ids[k].is_number_integer()) {
          throw core::Error(fmt::format("{}: token {}, layer {}: id {} is not an integer", where, t, l, k));
        }
        r.ids.push_back(ids[k].get<std::int64_t>());
      }
    }
  }
  return r;
}

// The routing arrays of one line, each named for errors.
std::vector<std::pair<std::string, const nlohmann::json*>> arrays_of(const nlohmann::json& j) {
  std::vector<std::pair<std::string, const nlohmann::json*>> out;
  if (j.is_array()) {
    out.emplace_back("the line", &j);
    return out;
  }
  if (!j.is_object()) {
    return out;
  }
  if (j.contains("prompt_routed_experts") && !j["prompt_routed_experts"].is_null()) {
    out.emplace_back("prompt_routed_experts", &j["prompt_routed_experts"]);
  }
  if (j.contains("choices") && j["choices"].is_array()) {
    for (std::size_t c = 0; c < j["choices"].size(); ++c) {
      const auto& choice = j["choices"][c];
      if (choice.is_object() && choice.contains("routed_experts") && !choice["routed_experts"].is_null()) {
        out.emplace_back(fmt::format("choices[{}].routed_experts", c), &choice["routed_experts"]);
      }
    }
  }
  if (j.contains("routed_experts") && !j["routed_experts"].is_null()) {
    out.emplace_back("routed_experts", &j["routed_experts"]);
  }
  return out;
}

// Packs tokens into steps and hands them to the sink.
class StepPacker {
 public:
  StepPacker(StepSink& sink, const trace::Header& h, std::int64_t tokens_per_step)
      : sink_(sink),
        h_(h),
        per_step_(tokens_per_step),
        counts_(h.moe_layers() * std::size_t{h.experts()}, 0),
        ids_(h.moe_layers()) {}

  void add(const std::int64_t* ids_by_layer_k, std::size_t layer_stride) {
    for (std::uint32_t l = 0; l < h_.moe_layers(); ++l) {
      for (std::uint32_t k = 0; k < h_.top_k(); ++k) {
        const auto e = static_cast<std::uint32_t>(ids_by_layer_k[l * layer_stride + k]);
        ids_[l].push_back(e);
        ++counts_[l * std::size_t{h_.experts()} + e];
      }
    }
    if (++tokens_ == per_step_) {
      flush();
    }
  }
  void flush() {
    if (tokens_ == 0) {
      return;
    }
    trace::Step s;
    s.set_index(static_cast<std::uint64_t>(steps_));
    s.set_tokens(static_cast<std::uint32_t>(tokens_));
    for (std::uint32_t l = 0; l < h_.moe_layers(); ++l) {
      trace::LayerLoad* layer = s.add_layers();
      const auto first = counts_.begin() + l * std::ptrdiff_t{h_.experts()};
      layer->mutable_expert_tokens()->Add(first, first + h_.experts());
      layer->mutable_token_experts()->Add(ids_[l].begin(), ids_[l].end());
      ids_[l].clear();
    }
    std::fill(counts_.begin(), counts_.end(), 0);
    sink_.step(s);
    ++steps_;
    total_tokens_ += tokens_;
    tokens_ = 0;
  }
  std::int64_t steps() const { return steps_; }
  std::int64_t tokens() const { return total_tokens_; }

 private:
  StepSink& sink_;
  const trace::Header& h_;
  std::int64_t per_step_;
  std::vector<std::uint32_t> counts_;
  std::vector<std::vector<std::uint32_t>> ids_;
  std::int64_t tokens_ = 0;
  std::int64_t steps_ = 0;
  std::int64_t total_tokens_ = 0;
};

}  // namespace

namespace {

// The import's state across lines: the header (from the first array), the packer, the counts.
class RoutedImport {
 public:
  // `model` is o.model's value (the caller checked it is there).
  RoutedImport(const std::filesystem::path& path, const RoutingImportOptions& o, const models::ModelSpec& model,
               StepSink& sink)
      : path_(path), o_(o), model_(model), sink_(sink), layout_(layer_layout(model)) {}

  // One routing array of a line (named `where`): its tokens into steps.
  void add(const Routing& r, const std::string& where) {
    // Which recorded layers are the MoE layers: all of them, or the MoE rows of every hidden layer.
    const bool hidden = r.layers == layout_.hidden_layers && r.layers != layout_.num_moe_layers();
    if (!hidden && r.layers != layout_.num_moe_layers()) {
      throw core::Error(fmt::format("{}: {} layers per token; the model {} has {} MoE layers of {} hidden layers",
                                    where, r.layers, model_.name, layout_.num_moe_layers(), layout_.hidden_layers));
    }
    if (!packer_) {
      h_ = recording_header(o_, layout_.num_moe_layers(), model_.routed_experts, static_cast<int>(r.top_k),
                            "vllm-routed-experts", where);
      h_.set_has_token_experts(true);
      h_.set_notes(path_.filename().string());
      sink_.begin(h_);
      packer_.emplace(sink_, h_, o_.tokens_per_step);
    } else if (r.top_k != h_.top_k()) {
      throw core::Error(fmt::format("{}: {} ids per token, earlier lines have {}", where, r.top_k, h_.top_k()));
    }
    const int layers = layout_.num_moe_layers();
    token_.resize(static_cast<std::size_t>(layers * r.top_k));
    for (std::int64_t t = 0; t < r.tokens; ++t) {
      const std::int64_t* row = r.ids.data() + t * r.layers * r.top_k;
      std::int64_t cached = 0;
      for (int m = 0; m < layers; ++m) {
        const std::int64_t src = hidden ? layout_.moe_layers[static_cast<std::size_t>(m)] : m;
        for (std::int64_t k = 0; k < r.top_k; ++k) {
          const std::int64_t id = row[src * r.top_k + k];
          cached += id == -1 ? 1 : 0;
          token_[static_cast<std::size_t>(m * r.top_k + k)] = id;
        }
      }
      if (cached == static_cast<std::int64_t>(token_.size())) {  // prefix-cached: not routed in this run
        ++cached_;
        continue;
      }
      for (int m = 0; m < layers; ++m) {
        const std::span<const std::int64_t> ids(token_.data() + m * r.top_k, static_cast<std::size_t>(r.top_k));
        if (const std::string p = token_problem(ids, h_, o_.model); !p.empty()) {
          throw core::Error(fmt::format("{}: token {}, MoE layer {}: {}", where, t, m, p));
        }
      }
      packer_->add(token_.data(), static_cast<std::size_t>(r.top_k));
    }
  }
  // A request ends: with one request per step, its step is complete.
  void end_request() {
    if (o_.tokens_per_step == 0 && packer_) {
      packer_->flush();
    }
  }
  ImportSummary finish() {
    ImportSummary sum;
    if (packer_) {
      packer_->flush();
      sum.steps = packer_->steps();
      sum.tokens = packer_->tokens();
    }
    sum.cached_tokens = cached_;
    sum.moe_layers = layout_.num_moe_layers();
    sum.experts = model_.routed_experts;
    sum.top_k = h_.top_k();
    return sum;
  }

 private:
  const std::filesystem::path& path_;
  const RoutingImportOptions& o_;
  const models::ModelSpec& model_;
  StepSink& sink_;
  LayerLayout layout_;
  trace::Header h_;
  std::optional<StepPacker> packer_;
  std::vector<std::int64_t> token_;  // one token's ids over the MoE layers
  std::int64_t cached_ = 0;
};

}  // namespace

ImportSummary import_vllm_routed_experts(const std::filesystem::path& path, const RoutingImportOptions& o,
                                         StepSink& sink) {
  std::ifstream in(path);
  if (!in) {
    throw core::Error(path.string() + ": cannot read");
  }
  if (!o.model.has_value()) {
    throw std::invalid_argument(
        "vllm-routed-experts: give --model NAME (ids are checked against its experts and "
        "layers, and dense layers are told from MoE ones)");
  }
  RoutedImport import(path, o, *o.model, sink);
  std::string line;
  std::int64_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) {
      continue;
    }
    const std::string at = fmt::format("{}: line {}", path.string(), line_no);
    core::check_json_depth(line, at);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      throw core::Error(at + ": invalid JSON: " + e.what());
    }
    const auto arrays = arrays_of(j);
    if (arrays.empty()) {
      throw core::Error(at +
                        ": no routed experts (expected \"routed_experts\", \"choices\"[i].\"routed_experts\" or "
                        "\"prompt_routed_experts\"; was the server started with --enable-return-routed-experts?)");
    }
    for (const auto& [name, array] : arrays) {
      std::string where = at;
      where.append(", ").append(name);
      import.add(routing_of(*array, where), where);
    }
    import.end_request();
  }
  return import.finish();
}

}  // namespace epsim::engines
