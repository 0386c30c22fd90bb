// SPDX-License-Identifier: Apache-2.0
#pragma once
// An MoE transformer's architecture, as in its published config.json, and the layout of its layers.
// Presets are TOML files in models/presets/, embedded in the binary.
#include <cstdint>
#include <string>

#include "core/params.hpp"
#include "core/presets.hpp"
#include "hardware/kernel_work.hpp"

namespace epsim::models {

enum class AttentionKind : std::uint8_t {
  gqa,  ///< multi-head / grouped-query attention (MHA is GQA with kv_heads = heads)
  mla,  ///< DeepSeek multi-head latent attention (compressed KV cache)
};

struct ModelSpec {
  std::string name;
  std::int64_t hidden_size = 0;
  std::int64_t num_layers = 0;
  std::int64_t first_dense_layers = 0;       ///< leading layers with a dense FFN instead of MoE
  std::int64_t moe_layer_step = 1;           ///< after those, every step-th layer is MoE (Llama-4 interleave)
  std::int64_t dense_intermediate_size = 0;  ///< FFN width of those dense layers
  std::int64_t moe_intermediate_size = 0;    ///< FFN width of one routed (and shared) expert
  std::int64_t routed_experts = 0;
  std::int64_t shared_experts = 0;
  std::int64_t top_k = 0;
  std::int64_t expert_groups = 1;  ///< DeepSeek's n_group (device-limited routing groups)
  /// Groups one token may route to (DeepSeek's topk_group): its top-k experts come from at most this many
  /// of the expert_groups groups (= expert_groups: no limit).
  std::int64_t topk_group = 1;
  bool group_limited() const { return topk_group < expert_groups; }
  AttentionKind attention = AttentionKind::gqa;
  std::int64_t num_heads = 0;
  std::int64_t num_kv_heads = 0;  ///< GQA only
  std::int64_t head_dim = 0;      ///< GQA only
  std::int64_t q_lora_rank = 0;   ///< MLA; 0 = queries are not compressed
  std::int64_t kv_lora_rank = 0;  ///< MLA
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t v_head_dim = 0;
  std::int64_t attention_chunk_size = 0;  ///< Llama-4: local (chunked) attention window, 0 = none
  std::int64_t full_attention_every = 0;  ///< with chunks: every n-th layer attends globally (Llama-4: 4)
  std::int64_t vocab_size = 0;
  bool tie_word_embeddings = false;
  /// Price the small kernels between the GEMMs (norms, RoPE, quantisation, activation, permutation;
  /// layer_work.hpp's elementwise_work). Off by default: results stay comparable with earlier releases.
  bool elementwise_kernels = false;
  std::int64_t weight_bytes = 2;      ///< bytes per weight element (2 = BF16, 1 = FP8)
  std::int64_t kv_cache_bytes = 2;    ///< bytes per KV-cache element
  std::int64_t activation_bytes = 2;  ///< bytes per activation element (dispatch/combine payload)

  bool is_moe_layer(std::int64_t layer) const {
    return layer >= first_dense_layers && (layer - first_dense_layers) % moe_layer_step == moe_layer_step - 1;
  }
  std::int64_t num_moe_layers() const { return (num_layers - first_dense_layers) / moe_layer_step; }
  /// Whether `layer` uses chunked (local) attention.
  bool is_chunked_attention_layer(std::int64_t layer) const {
    return attention_chunk_size > 0 && (full_attention_every == 0 || (layer + 1) % full_attention_every != 0);
  }
  hardware::Precision weight_precision() const {
    return weight_bytes == 1 ? hardware::Precision::fp8 : hardware::Precision::bf16;
  }
};

/// Parses and validates a model spec (preset layered under user overrides).
ModelSpec parse_model_spec(core::ParamTable& t);
/// The [model] section of `root`: the preset it names, under its field overrides.
ModelSpec parse_model_section(core::ParamTable& root);

/// The shipped model presets.
const core::PresetCatalog& model_presets();
/// A shipped preset as a ModelSpec; throws core::Error listing the valid names if unknown.
ModelSpec load_model_preset(const std::string& name);

}  // namespace epsim::models
