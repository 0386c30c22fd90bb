// SPDX-License-Identifier: Apache-2.0
#include "workloads/trace_tools.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>

#include "core/atomic_file.hpp"
#include "core/csv_lines.hpp"
#include "core/error.hpp"
#include "core/json_depth.hpp"
#include "workloads/trace_io.hpp"

namespace epsim::workloads {

trace::Step synthesize_step(SyntheticRouter& router, std::int64_t index, const SynthesisOptions& o) {
  const int experts = router.num_experts();
  const int k = router.top_k();
  const std::int64_t tokens = o.tokens;
  const auto prefill = static_cast<std::int64_t>(std::llround(static_cast<double>(tokens) * o.prefill_share));
  // Requests: blocks of tokens_per_request tokens, ids advancing with the step so topics vary.
  std::vector<RequestTokens> reqs;
  const core::Time now = core::from_ms(o.step_ms * static_cast<double>(index));
  const std::int64_t per_step = (tokens + o.tokens_per_request - 1) / o.tokens_per_request;
  for (std::int64_t t = 0, r = 0; t < tokens; t += o.tokens_per_request, ++r) {
    const std::int64_t n = std::min(o.tokens_per_request, tokens - t);
    reqs.push_back(RequestTokens{index * per_step + r, now, n, t < prefill});  // dense ids, as the engine's
  }
  router.begin_step(StepContext{now, tokens, prefill, tokens - prefill, reqs});
  trace::Step step;
  step.set_index(static_cast<std::uint64_t>(index));
  step.set_tokens(static_cast<std::uint32_t>(tokens));
  step.set_phase(prefill == tokens ? trace::PHASE_PREFILL : prefill == 0 ? trace::PHASE_DECODE : trace::PHASE_MIXED);
  std::vector<std::int32_t> counts(static_cast<std::size_t>(experts));
  std::vector<int> order(static_cast<std::size_t>(experts));
  std::vector<std::uint32_t> token_ids(static_cast<std::size_t>(tokens * k));
  const bool per_token = (o.token_experts || o.origin_gpus > 0) && o.topk_group < o.expert_groups;
  std::optional<TokenSampler> sampler;
  std::vector<std::int32_t> drawn;
  core::Rng token_rng(o.token_seed + static_cast<std::uint64_t>(index));
  if (per_token) {
    sampler.emplace(experts, k, o.expert_groups, o.topk_group);
    drawn.resize(token_ids.size());
  }
  for (int l = 0; l < router.num_moe_layers(); ++l) {
    if (per_token && sampler) {
      router.sample_tokens(l, *sampler, token_rng, drawn);
      std::fill(counts.begin(), counts.end(), 0);
      for (std::size_t i = 0; i < drawn.size(); ++i) {
        token_ids[i] = static_cast<std::uint32_t>(drawn[i]);
        ++counts[static_cast<std::size_t>(drawn[i])];
      }
    } else {
      router.sample(l, tokens, counts);
    }
    trace::LayerLoad* layer = step.add_layers();
    for (const std::int32_t c : counts) {
      layer->add_expert_tokens(static_cast<std::uint32_t>(c));
    }
    if (!o.token_experts && o.origin_gpus == 0) {
      continue;
    }
    if (per_token) {
      // token_ids hold the drawn tokens already.
    } else {
      // Deal each expert's picks to consecutive tokens (cyclically), experts by decreasing count: a run of
      // at most `tokens` equal ids lands on distinct tokens, so every token gets k distinct experts.
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        return counts[static_cast<std::size_t>(a)] > counts[static_cast<std::size_t>(b)];
      });
      std::int64_t pick = 0;
      for (const int e : order) {
        for (std::int32_t c = 0; c < counts[static_cast<std::size_t>(e)]; ++c, ++pick) {
          const std::int64_t token = pick % tokens;
          const std::int64_t slot = pick / tokens;
          token_ids[static_cast<std::size_t>(token * k + slot)] = static_cast<std::uint32_t>(e);
        }
      }
    }
    if (o.token_experts) {
      for (const std::uint32_t id : token_ids) {
        layer->add_token_experts(id);
      }
    }
    if (o.origin_gpus > 0) {
      // Tokens live on origin GPUs in contiguous blocks.
      std::vector<std::uint32_t> origin(static_cast<std::size_t>(o.origin_gpus) * static_cast<std::size_t>(experts), 0);
      for (std::int64_t t = 0; t < tokens; ++t) {
        const std::int64_t g = t * o.origin_gpus / tokens;
        for (int s = 0; s < k; ++s) {
          ++origin[static_cast<std::size_t>(g) * static_cast<std::size_t>(experts) +
                   token_ids[static_cast<std::size_t>(t * k + s)]];
        }
      }
      for (const std::uint32_t c : origin) {
        layer->add_origin_expert_tokens(c);
      }
    }
  }
  return step;
}

trace::Header generate_trace(const std::filesystem::path& path, SyntheticRouter& router, const std::string& model,
                             const SynthesisOptions& o) {
  trace::Header h;
  h.set_version(1);
  h.set_model(model);
  h.set_moe_layers(static_cast<std::uint32_t>(router.num_moe_layers()));
  h.set_experts(static_cast<std::uint32_t>(router.num_experts()));
  h.set_top_k(static_cast<std::uint32_t>(router.top_k()));
  h.set_source("synthetic");
  h.set_origin_gpus(static_cast<std::uint32_t>(o.origin_gpus));
  h.set_has_token_experts(o.token_experts);
  TraceWriter w(path, h);
  for (std::int64_t s = 0; s < o.steps; ++s) {
    w.write(synthesize_step(router, s, o));
  }
  w.close();
  return h;
}

std::int64_t import_csv(const std::filesystem::path& csv, trace::Header header, const std::filesystem::path& out) {
  std::ifstream in(csv);
  if (!in) {
    throw core::Error(csv.string() + ": cannot open the CSV");
  }
  if (header.source().empty()) {
    header.set_source(csv.filename().string());
  }
  header.set_origin_gpus(0);
  header.set_has_token_experts(false);
  TraceWriter w(out, header);
  const std::uint32_t layers = header.moe_layers();
  const std::uint32_t experts = header.experts();
  std::vector<std::uint32_t> counts(static_cast<std::size_t>(layers) * experts);
  std::int64_t current = -1;
  std::int64_t written = 0;
  const auto flush = [&] {
    if (current < 0) {
      return;
    }
    trace::Step step;
    step.set_index(static_cast<std::uint64_t>(current));
    const std::uint64_t picks = std::accumulate(counts.begin(), counts.begin() + experts, std::uint64_t{0});
    if (picks % header.top_k() != 0) {
      throw core::Error(fmt::format("{}: step {}, layer 0: expert counts sum to {}, not a multiple of top_k = {}",
                                    csv.string(), current, picks, header.top_k()));
    }
    step.set_tokens(static_cast<std::uint32_t>(picks / header.top_k()));
    for (std::uint32_t l = 0; l < layers; ++l) {
      trace::LayerLoad* layer = step.add_layers();
      for (std::uint32_t e = 0; e < experts; ++e) {
        layer->add_expert_tokens(counts[l * experts + e]);
      }
    }
    w.write(step);  // validates: every layer must sum to tokens x top_k
    ++written;
    std::fill(counts.begin(), counts.end(), 0);
  };
  core::CsvLines lines(in, "step", csv.string());
  std::vector<long long> v;
  while (lines.next()) {
    const std::string& line = lines.line();
    const std::int64_t line_no = lines.line_no();
    if (!core::parse_csv_numbers(line, v)) {
      throw core::Error(fmt::format("{}: line {}: expected integers step,layer,expert,tokens, got \"{}\"", csv.string(),
                                    line_no, line));
    }
    if (v.size() != 4 || v[0] < 0 || v[1] < 0 || v[2] < 0 || v[3] < 0) {
      throw core::Error(
          fmt::format("{}: line {}: expected four non-negative integers step,layer,expert,tokens, got \"{}\"",
                      csv.string(), line_no, line));
    }
    if (v[1] >= layers || v[2] >= experts) {
      throw core::Error(fmt::format("{}: line {}: layer {} / expert {} out of range ({} layers, {} experts)",
                                    csv.string(), line_no, v[1], v[2], layers, experts));
    }
    if (v[0] != current) {
      if (v[0] < current) {
        throw core::Error(fmt::format("{}: line {}: step {} after step {} (rows must be grouped by increasing step)",
                                      csv.string(), line_no, v[0], current));
      }
      flush();
      current = v[0];
    }
    std::uint32_t& count = counts[static_cast<std::size_t>(v[1]) * experts + static_cast<std::size_t>(v[2])];
    if (static_cast<unsigned long long>(v[3]) > std::numeric_limits<std::uint32_t>::max() - count) {
      throw core::Error(
          fmt::format("{}: line {}: {} tokens for one expert of one step; a trace holds at most {} (it "
                      "would wrap around)",
                      csv.string(), line_no, v[3] + count, std::numeric_limits<std::uint32_t>::max()));
    }
    count += static_cast<std::uint32_t>(v[3]);
  }
  flush();
  w.close();
  return written;
}

namespace {

std::int64_t import_token_json_checked(const std::filesystem::path& json, const std::filesystem::path& out) {
  std::ifstream in(json);
  if (!in) {
    throw core::Error(json.string() + ": cannot open the JSON dump");
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(core::read_json_text(in, json.string()));
  } catch (const nlohmann::json::exception& e) {
    throw core::Error(json.string() + ": invalid JSON: " + e.what());
  }
  const auto need = [&](const char* key) -> const nlohmann::json& {
    if (!j.contains(key)) {
      throw core::Error(fmt::format("{}: missing key \"{}\"", json.string(), key));
    }
    return j[key];
  };
  // Whole numbers in range, checked as signed 64-bit first: -1 read as an unsigned 32-bit count would
  // be 4,294,967,295 experts (16 GiB of counts).
  const auto whole = [&](const nlohmann::json& v, const std::string& what, std::int64_t lo, std::int64_t hi) {
    if (!v.is_number_integer() || v.get<std::int64_t>() < lo || v.get<std::int64_t>() > hi ||
        (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi))) {
      throw core::Error(
          fmt::format("{}: {}: expected a whole number in [{}, {}], got {}", json.string(), what, lo, hi, v.dump()));
    }
    return static_cast<std::uint32_t>(v.get<std::int64_t>());
  };
  trace::Header h;
  h.set_version(1);
  if (!j.is_object()) {
    throw core::Error(json.string() + ": expected a JSON object with \"experts\", \"top_k\" and \"steps\"");
  }
  if (j.contains("model") && !j["model"].is_string()) {
    throw core::Error(json.string() + ": \"model\": expected a string");
  }
  h.set_model(j.value("model", ""));
  h.set_experts(whole(need("experts"), "\"experts\"", 1, k_max_trace_experts));
  h.set_top_k(whole(need("top_k"), "\"top_k\"", 1, h.experts()));
  h.set_source(json.filename().string());
  h.set_has_token_experts(true);
  const nlohmann::json& steps = need("steps");
  if (!steps.is_array() || steps.empty() || !steps[0].contains("layers")) {
    throw core::Error(json.string() + ": \"steps\" must be a non-empty array of {\"layers\": [...]}");
  }
  if (steps[0]["layers"].size() > k_max_trace_layers) {
    throw core::Error(fmt::format("{}: step 0 has {} layers; expected at most {}", json.string(),
                                  steps[0]["layers"].size(), k_max_trace_layers));
  }
  h.set_moe_layers(static_cast<std::uint32_t>(steps[0]["layers"].size()));
  TraceWriter w(out, h);
  std::int64_t index = 0;
  for (const auto& s : steps) {
    const auto& layers = s.at("layers");
    trace::Step step;
    step.set_index(static_cast<std::uint64_t>(index));
    if (layers.empty()) {
      throw core::Error(fmt::format("{}: step {}: no layers", json.string(), index));
    }
    step.set_tokens(static_cast<std::uint32_t>(layers[0].size()));
    for (std::size_t l = 0; l < layers.size(); ++l) {
      trace::LayerLoad* layer = step.add_layers();
      std::vector<std::uint32_t> counts(h.experts(), 0);
      if (layers[l].size() != step.tokens()) {
        throw core::Error(fmt::format("{}: step {}, layer {}: {} tokens, layer 0 has {}", json.string(), index, l,
                                      layers[l].size(), step.tokens()));
      }
      for (const auto& token : layers[l]) {
        if (token.size() != h.top_k()) {
          throw core::Error(fmt::format("{}: step {}, layer {}: a token has {} experts, expected top_k = {}",
                                        json.string(), index, l, token.size(), h.top_k()));
        }
        for (const auto& id : token) {
          const std::uint32_t e = whole(id, fmt::format("step {}, layer {}: expert id", index, l), 0, h.experts() - 1);
          layer->add_token_experts(e);
          ++counts[e];
        }
      }
      for (const std::uint32_t c : counts) {
        layer->add_expert_tokens(c);
      }
    }
    w.write(step);
    ++index;
  }
  w.close();
  return index;
}

}  // namespace

std::int64_t import_token_json(const std::filesystem::path& json, const std::filesystem::path& out) {
  try {
    return import_token_json_checked(json, out);
  } catch (const nlohmann::json::exception& e) {
    // A value of the wrong type or a missing key deeper in the dump: named with the file, never a crash.
    throw core::Error(fmt::format("{}: unexpected JSON structure: {}", json.string(), e.what()));
  }
}

std::int64_t export_csv(const std::filesystem::path& trace_path, const std::filesystem::path& csv) {
  TraceReader r(trace_path);
  std::int64_t n = 0;
  // Whole or nothing: a trace that turns out corrupt half-way leaves no partial CSV (nor a .tmp file).
  core::write_file_atomically(csv, [&](std::ostream& out) {
    out << "step,layer,expert,tokens\n";
    trace::Step s;
    while (r.next(s)) {
      for (int l = 0; l < s.layers_size(); ++l) {
        for (int e = 0; e < s.layers(l).expert_tokens_size(); ++e) {
          if (const std::uint32_t c = s.layers(l).expert_tokens(e); c > 0) {
            out << s.index() << ',' << l << ',' << e << ',' << c << '\n';
          }
        }
      }
      ++n;
    }
  });
  return n;
}

}  // namespace epsim::workloads
