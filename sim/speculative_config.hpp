// SPDX-License-Identifier: Apache-2.0
#pragma once
// [speculative]: speculative decoding. Each step a decoding request verifies k draft tokens with the
// target model (k + 1 tokens: its last accepted token and the drafts), accepts A of them (the
// acceptance model) and emits A + 1. The drafts come from DeepSeek-V3's MTP module (one extra
// transformer block with an MoE layer, sharing the embedding and the output head; arXiv 2412.19437
// §2.2) run k times, or from a small dense draft model run k times, on the target's own GPUs.
#include <cstdint>
#include <span>
#include <string_view>

#include "core/params.hpp"
#include "sim/acceptance_model.hpp"

namespace epsim::serving {

enum class SpeculativeMethod : std::uint8_t { none, mtp, draft_model };

/// The draft model's size (a dense GQA transformer); 0 = the target's value where noted.
struct DraftModelSize {
  std::int64_t layers = 1;
  std::int64_t hidden_size = 4096;
  std::int64_t intermediate_size = 14336;
  std::int64_t num_heads = 32;
  std::int64_t num_kv_heads = 8;
  std::int64_t vocab_size = 0;  ///< 0 = the target's vocabulary
};

struct SpeculativeConfig {
  SpeculativeMethod method = SpeculativeMethod::none;
  int draft_tokens = 0;  ///< k (0 when off)
  AcceptanceModel acceptance;
  DraftModelSize draft;  ///< method = draft_model

  bool enabled() const { return method != SpeculativeMethod::none; }
};

/// A published acceptance model: its per-position rates and where they come from (docs/serving.md).
struct AcceptancePreset {
  std::string_view name;
  std::span<const double> rates;
  std::string_view source;
};
std::span<const AcceptancePreset> acceptance_presets();

/// Reads and finishes [speculative] (and [speculative.draft_model]) of `root`.
SpeculativeConfig parse_speculative(core::ParamTable& root);

}  // namespace epsim::serving
