// SPDX-License-Identifier: Apache-2.0
#include "sim/speculative_config.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <string>
#include <vector>

namespace epsim::serving {

namespace {

// DeepSeek-V3 technical report (arXiv 2412.19437, §5.4.3): the second token's acceptance "ranges
// between 85% and 90%"; the midpoint.
constexpr std::array<double, 1> k_deepseek_v3_mtp{0.875};
// Nebius' model card of DeepSeek-V3-0324's original MTP module chained K = 7 times: mean acceptance
// length 3.20 (temperature 0; MT-bench, HumanEval, GSM8K). With one rate p at every position,
// 1 + p + ... + p^7 = 3.20 gives p = 0.707.
constexpr std::array<double, 7> k_deepseek_v3_mtp_chain{0.707, 0.707, 0.707, 0.707, 0.707, 0.707, 0.707};

constexpr std::array<AcceptancePreset, 2> k_presets{{
    {"deepseek-v3-mtp", k_deepseek_v3_mtp, "DeepSeek-V3 report, 85-90 % second-token acceptance (k = 1)"},
    {"deepseek-v3-mtp-chain", k_deepseek_v3_mtp_chain,
     "DeepSeek-V3-0324 MTP chained, mean acceptance length 3.20 at K = 7 (Nebius model card)"},
}};

std::string preset_names() {
  std::string out;
  for (const AcceptancePreset& p : k_presets) {
    out += (out.empty() ? "" : ", ") + std::string(p.name);
  }
  return out;
}

DraftModelSize parse_draft(core::ParamTable& root) {
  auto t = root.table("draft_model", "the draft model of method = \"draft_model\": a dense GQA transformer");
  DraftModelSize d;
  d.layers = t.integer("layers", d.layers, "transformer layers of the draft model", {1, 256});
  d.hidden_size = t.integer("hidden_size", d.hidden_size, "hidden size of the draft model", {1, 1 << 17});
  d.intermediate_size =
      t.integer("intermediate_size", d.intermediate_size, "FFN width (SwiGLU) of the draft model", {1, 1 << 20});
  d.num_heads = t.integer("num_heads", d.num_heads, "attention heads of the draft model", {1, 1 << 12});
  d.num_kv_heads = t.integer("num_kv_heads", d.num_kv_heads, "KV heads of the draft model (GQA)", {1, 1 << 12});
  d.vocab_size = t.integer("vocab_size", 0, "vocabulary of the draft model's LM head (0 = the target's)", {0, 1 << 24});
  if (d.num_heads % d.num_kv_heads != 0 || d.hidden_size % d.num_heads != 0) {
    t.fail("num_kv_heads",
           fmt::format("must divide num_heads ({}), which must divide hidden_size ({})", d.num_heads, d.hidden_size));
  }
  t.finish();
  return d;
}

}  // namespace

std::span<const AcceptancePreset> acceptance_presets() {
  return k_presets;
}

SpeculativeConfig parse_speculative(core::ParamTable& root) {
  auto t = root.table("speculative", "speculative decoding: draft tokens verified by the target each step");
  static constexpr std::array<core::Choice<SpeculativeMethod>, 3> k_methods{
      {{"none", SpeculativeMethod::none},
       {"mtp", SpeculativeMethod::mtp},
       {"draft_model", SpeculativeMethod::draft_model}}};
  SpeculativeConfig c;
  c.method = t.choice<SpeculativeMethod>(
      "method", SpeculativeMethod::none,
      "none; mtp: the model's MTP module drafts (DeepSeek-V3: one block with an MoE layer, run k times); "
      "draft_model: a small dense model ([speculative.draft_model]) drafts, on the same GPUs",
      k_methods);
  const auto k = static_cast<int>(
      t.integer("draft_tokens", 1, "k: draft tokens each decoding request proposes and verifies per step", {1, 16}));
  const std::vector<double> rates = t.real_list(
      "acceptance_rates",
      "per-position conditional acceptance (k numbers): position i is accepted with this rate if 1..i-1 were",
      core::k_unit_interval);
  const std::vector<double> lengths = t.real_list(
      "acceptance_lengths", "measured distribution of accepted drafts: P(A = 0), ..., P(A = k) (k + 1 numbers, sum 1)",
      core::k_unit_interval);
  const std::string preset = t.string("acceptance_preset", "",
                                      "a published acceptance model (per-position rates): deepseek-v3-mtp (k = 1), "
                                      "deepseek-v3-mtp-chain (k <= 7); docs/serving.md gives the sources");
  const DraftModelSize draft = parse_draft(t);
  if (t.documenting()) {
    t.finish();
    return c;
  }
  const int given = (rates.empty() ? 0 : 1) + (lengths.empty() ? 0 : 1) + (preset.empty() ? 0 : 1);
  if (c.method == SpeculativeMethod::none) {
    if (given > 0 || t.contains("draft_tokens")) {
      t.fail("method", "speculative keys are set but method = \"none\": set method = \"mtp\" or \"draft_model\"");
    }
    t.finish();
    return c;
  }
  if (given != 1) {
    t.fail("acceptance_rates",
           fmt::format("give exactly one acceptance model: acceptance_rates ({} numbers), acceptance_lengths ({} "
                       "numbers) or acceptance_preset ({})",
                       k, k + 1, preset_names()));
  }
  if (!rates.empty()) {
    if (static_cast<int>(rates.size()) != k) {
      t.fail("acceptance_rates", fmt::format("expected draft_tokens = {} rates, got {}", k, rates.size()));
    }
    c.acceptance = AcceptanceModel::from_rates(rates);
  } else if (!lengths.empty()) {
    if (static_cast<int>(lengths.size()) != k + 1) {
      t.fail("acceptance_lengths",
             fmt::format("expected draft_tokens + 1 = {} probabilities (A = 0..{}), got {}", k + 1, k, lengths.size()));
    }
    double sum = 0.0;
    for (const double p : lengths) {
      sum += p;
    }
    if (std::abs(sum - 1.0) > 1e-6) {
      t.fail("acceptance_lengths", fmt::format("the probabilities must sum to 1, got {:g}", sum));
    }
    c.acceptance = AcceptanceModel::from_lengths(lengths);
  } else {
    const AcceptancePreset* found = nullptr;
    for (const AcceptancePreset& p : k_presets) {
      found = p.name == preset ? &p : found;
    }
    if (found == nullptr) {
      t.fail("acceptance_preset", fmt::format("unknown preset \"{}\"; valid presets are: {}", preset, preset_names()));
    }
    if (static_cast<int>(found->rates.size()) < k) {
      t.fail("acceptance_preset", fmt::format("\"{}\" gives rates for k <= {} draft tokens, got draft_tokens = {}",
                                              preset, found->rates.size(), k));
    }
    c.acceptance = AcceptanceModel::from_rates(found->rates.first(static_cast<std::size_t>(k)));
  }
  c.draft_tokens = k;
  c.draft = draft;
  if (c.method != SpeculativeMethod::draft_model && t.contains("draft_model")) {
    t.fail("method", "[speculative.draft_model] is set but method is not \"draft_model\"");
  }
  t.finish();
  return c;
}

}  // namespace epsim::serving
