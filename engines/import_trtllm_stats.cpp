// SPDX-License-Identifier: Apache-2.0
#include "engines/import_trtllm_stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>

#include "core/error.hpp"
#include "core/json_depth.hpp"
#include "engines/layer_layout.hpp"
#include "engines/safetensors.hpp"

namespace epsim::engines {
namespace {

struct Meta {
  int experts = 0;
  int top_k = 0;
};

// The directory a user named (or the one holding the meta_info.json they named).
std::filesystem::path stats_dir(const std::filesystem::path& p) {
  return std::filesystem::is_directory(p) ? p : p.parent_path();
}

Meta read_meta(const std::filesystem::path& dir) {
  const std::filesystem::path path = dir / "meta_info.json";
  std::ifstream in(path);
  if (!in) {
    throw core::Error(path.string() + ": cannot read (TensorRT-LLM writes it beside rank*.safetensors)");
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(core::read_json_text(in, path.string()));
  } catch (const nlohmann::json::exception& e) {
    throw core::Error(path.string() + ": invalid JSON: " + e.what());
  }
  const auto positive = [&](const char* key) {
    if (!j.is_object() || !j.contains(key) || !j[key].is_number_integer() || j[key].get<int>() < 1) {
      throw core::Error(fmt::format("{}: expected a positive integer \"{}\"", path.string(), key));
    }
    return j[key].get<int>();
  };
  return Meta{positive("num_experts"), positive("num_experts_per_token")};
}

// The decimal number `s` is made of entirely (no sign, no other character), or -1.
std::int64_t whole_number(std::string_view s) {
  if (s.empty() || s.size() > 15 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return -1;
  }
  std::int64_t v = 0;
  for (const char c : s) {
    v = v * 10 + (c - '0');
  }
  return v;
}

// rank{r}.safetensors (or cooccurrence_rank{r}...) in rank order.
std::vector<std::filesystem::path> rank_files(const std::filesystem::path& dir, const std::string& prefix) {
  const std::string head = prefix + "rank";
  const std::string tail = ".safetensors";
  std::map<std::int64_t, std::filesystem::path> by_rank;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string file = entry.path().filename().string();
    if (file.size() > head.size() + tail.size() && file.compare(0, head.size(), head) == 0 &&
        file.compare(file.size() - tail.size(), tail.size(), tail) == 0) {
      const std::int64_t r =
          whole_number(std::string_view(file).substr(head.size(), file.size() - head.size() - tail.size()));
      if (r >= 0) {
        by_rank[r] = entry.path();
      }
    }
  }
  std::vector<std::filesystem::path> out;
  out.reserve(by_rank.size());
  for (const auto& [r, p] : by_rank) {
    out.push_back(p);
  }
  return out;
}

// The iterations and layers of the keys "{iteration}_{layer}" over all files; every key must parse.
void keys_of(std::vector<SafetensorsFile>& files, const std::vector<std::filesystem::path>& paths,
             std::set<std::int64_t>& iterations, std::set<int>& layers) {
  for (std::size_t f = 0; f < files.size(); ++f) {
    for (const auto& [name, e] : files[f].tensors()) {
      const auto cut = name.find('_');
      const std::int64_t it = cut == std::string::npos ? -1 : whole_number(std::string_view(name).substr(0, cut));
      const std::int64_t layer = cut == std::string::npos ? -1 : whole_number(std::string_view(name).substr(cut + 1));
      if (it < 0 || layer < 0 || layer > (1 << 20)) {
        throw core::Error(
            fmt::format("{}: tensor \"{}\": expected keys \"{{iteration}}_{{layer}}\"", paths[f].string(), name));
      }
      iterations.insert(it);
      layers.insert(static_cast<int>(layer));
    }
  }
}

// The recorded layers that are the model's MoE layers (MTP layers past the hidden ones dropped), in order.
std::vector<int> moe_layer_ids(const std::set<int>& recorded, const RoutingImportOptions& o, const std::string& where) {
  std::vector<int> ids;
  if (!o.model) {
    ids.assign(recorded.begin(), recorded.end());
    return ids;
  }
  const LayerLayout layout = layer_layout(*o.model);
  for (const int l : recorded) {
    if (l >= layout.hidden_layers) {
      continue;  // an MTP draft layer
    }
    if (layout.moe_index(l) < 0) {
      throw core::Error(fmt::format("{}: layer {} is recorded but is a dense layer of {}", where, l, o.model->name));
    }
    ids.push_back(l);
  }
  if (ids != layout.moe_layers) {
    throw core::Error(fmt::format("{}: {} MoE layers recorded, the model {} has {} (hidden-layer ids {}..{})", where,
                                  ids.size(), o.model->name, layout.num_moe_layers(), layout.moe_layers.front(),
                                  layout.moe_layers.back()));
  }
  return ids;
}

void check_experts(const Meta& meta, const RoutingImportOptions& o, const std::string& where) {
  if (o.model && meta.experts != o.model->routed_experts) {
    throw core::Error(fmt::format("{}: num_experts = {}, the model {} has {} experts{}", where, meta.experts,
                                  o.model->name, o.model->routed_experts,
                                  meta.experts > o.model->routed_experts
                                      ? " (recorded with the load balancer on, the counts are per slot, not per "
                                        "expert: record with it off)"
                                      : ""));
  }
}

// The statistics directory's files of one kind ("" = counts, "cooccurrence_"), opened (headers only) and
// indexed: what both readers start from.
struct StatsFiles {
  Meta meta;
  std::string where;
  std::vector<std::filesystem::path> paths;
  std::vector<SafetensorsFile> files;
  std::set<std::int64_t> iterations;
  std::set<int> recorded;  // layer ids in the keys
};

StatsFiles open_stats(const std::filesystem::path& path, const RoutingImportOptions& o, const std::string& prefix) {
  StatsFiles s;
  const std::filesystem::path dir = stats_dir(path);
  s.meta = read_meta(dir);
  s.where = dir.string();
  check_experts(s.meta, o, s.where + "/meta_info.json");
  s.paths = rank_files(dir, prefix);
  s.files.reserve(s.paths.size());
  for (const auto& p : s.paths) {
    s.files.emplace_back(p);
  }
  keys_of(s.files, s.paths, s.iterations, s.recorded);
  return s;
}

}  // namespace

ImportSummary import_trtllm_expert_stats(const std::filesystem::path& path, const RoutingImportOptions& o,
                                         StepSink& sink) {
  StatsFiles s = open_stats(path, o, "");
  const Meta& meta = s.meta;
  const std::string& where = s.where;
  const auto& paths = s.paths;
  auto& files = s.files;
  const auto& iterations = s.iterations;
  if (paths.empty()) {
    throw core::Error(where + ": no rank{r}.safetensors files");
  }
  if (iterations.empty()) {
    throw core::Error(where + ": the rank files hold no tensors");
  }
  if (*iterations.rbegin() - *iterations.begin() + 1 != static_cast<std::int64_t>(iterations.size())) {
    throw core::Error(fmt::format("{}: iterations {}..{} are not contiguous ({} of them)", where, *iterations.begin(),
                                  *iterations.rbegin(), iterations.size()));
  }
  const std::vector<int> layers = moe_layer_ids(s.recorded, o, where);
  const trace::Header h = recording_header(o, static_cast<std::int64_t>(layers.size()), meta.experts, meta.top_k,
                                           "trtllm-expert-stats", where);
  sink.begin(h);
  ImportSummary sum;
  LoadMatrix load(layers.size(), std::vector<double>(static_cast<std::size_t>(meta.experts)));
  for (const std::int64_t it : iterations) {
    for (std::size_t l = 0; l < layers.size(); ++l) {
      std::fill(load[l].begin(), load[l].end(), 0.0);
      const std::string key = fmt::format("{}_{}", it, layers[l]);
      bool any = false;
      for (std::size_t f = 0; f < files.size(); ++f) {
        if (files[f].tensors().count(key) == 0) {
          continue;
        }
        const std::vector<double> counts = files[f].read(key);
        if (static_cast<int>(counts.size()) != meta.experts) {
          throw core::Error(fmt::format("{}: tensor \"{}\" has {} counts, meta_info.json says {} experts",
                                        paths[f].string(), key, counts.size(), meta.experts));
        }
        for (std::size_t e = 0; e < counts.size(); ++e) {
          load[l][e] += counts[e];
        }
        any = true;
      }
      if (!any) {
        throw core::Error(fmt::format("{}: no rank recorded iteration {}, layer {}", where, it, layers[l]));
      }
    }
    const trace::Step step =
        counts_step(load, static_cast<std::int64_t>(sum.steps), meta.top_k, fmt::format("{}: iteration {}", where, it));
    sink.step(step);
    ++sum.steps;
    sum.tokens += step.tokens();
  }
  sum.moe_layers = static_cast<std::int64_t>(layers.size());
  sum.experts = meta.experts;
  sum.top_k = meta.top_k;
  return sum;
}

std::vector<double> trtllm_coactivation(const std::filesystem::path& path, const RoutingImportOptions& o) {
  StatsFiles s = open_stats(path, o, "cooccurrence_");
  if (s.paths.empty()) {
    return {};
  }
  const auto& paths = s.paths;
  auto& files = s.files;
  const std::vector<int> layers = moe_layer_ids(s.recorded, o, s.where);
  const auto E = static_cast<std::size_t>(s.meta.experts);
  std::vector<double> out(layers.size() * E * E, 0.0);
  for (std::size_t f = 0; f < files.size(); ++f) {
    for (std::size_t l = 0; l < layers.size(); ++l) {
      for (const std::int64_t it : s.iterations) {
        const std::string key = fmt::format("{}_{}", it, layers[l]);
        if (files[f].tensors().count(key) == 0) {
          continue;
        }
        const std::vector<double> m = files[f].read(key);
        if (m.size() != E * E) {
          throw core::Error(
              fmt::format("{}: tensor \"{}\" has {} values, expected {} x {}", paths[f].string(), key, m.size(), E, E));
        }
        for (std::size_t a = 0; a < E; ++a) {
          for (std::size_t b = 0; b < E; ++b) {
            if (a != b) {
              out[(l * E + a) * E + b] += m[a * E + b];
            }
          }
        }
      }
    }
  }
  return out;
}

}  // namespace epsim::engines
