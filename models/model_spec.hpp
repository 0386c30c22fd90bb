// SPDX-License-Identifier: Apache-2.0
#pragma once
// An MoE transformer's architecture, as in its published config.json, and the layout of its layers.
// Presets are TOML files in models/presets/, embedded in the binary.
#include <cstdint>
#include <string>
#include <vector>

#include "core/params.hpp"
#include "core/presets.hpp"
#include "hardware/kernel_work.hpp"
#include "models/weight_format.hpp"

namespace epsim::models {

enum class AttentionKind : std::uint8_t {
  gqa,  ///< multi-head / grouped-query attention (MHA is GQA with kv_heads = heads)
  mla,  ///< DeepSeek multi-head latent attention (compressed KV cache)
};

/// Which attention one layer runs.
enum class LayerAttention : std::uint8_t {
  full,     ///< softmax attention over the whole context (GQA or MLA; DSA when index_topk > 0)
  sliding,  ///< softmax attention over the last sliding_window tokens (gpt-oss, Mistral)
  chunked,  ///< softmax attention within fixed chunks of attention_chunk_size (Llama-4 local layers)
  linear,   ///< linear attention: a fixed-size state per request instead of a KV cache
};
inline constexpr int k_layer_attentions = 4;

/// The recurrence of the linear-attention layers.
enum class LinearAttentionKind : std::uint8_t {
  gated_deltanet,  ///< Gated DeltaNet (Qwen3-Next): short causal conv, decay, delta-rule state update
  lightning,       ///< lightning attention (MiniMax-01): decayed linear attention, no conv, no delta rule
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
  /// Each layer's attention (num_layers entries); empty: chunked where attention_chunk_size and
  /// full_attention_every say so, else full.
  std::vector<LayerAttention> layer_types;
  std::int64_t sliding_window = 0;     ///< keys a sliding layer's query sees, itself included
  bool attention_sinks = false;        ///< gpt-oss's learned per-head sink logits (no KV, no priced cost)
  bool attention_output_gate = false;  ///< Qwen3-Next: q_proj also emits a sigmoid gate per head dim
  LinearAttentionKind linear_kind = LinearAttentionKind::gated_deltanet;
  std::int64_t linear_num_key_heads = 0;
  std::int64_t linear_num_value_heads = 0;
  std::int64_t linear_key_head_dim = 0;
  std::int64_t linear_value_head_dim = 0;
  std::int64_t linear_conv_kernel_dim = 0;  ///< Gated DeltaNet's causal conv width (0 = no conv)
  /// DeepSeek Sparse Attention (V3.2): a lightning indexer of index_n_heads heads of index_head_dim scores
  /// every past token; the attention then reads the index_topk best. 0 = dense attention.
  std::int64_t index_n_heads = 0;
  std::int64_t index_head_dim = 0;
  std::int64_t index_topk = 0;
  bool sparse_attention() const { return index_topk > 0; }
  /// Total FFN width of the shared experts (0 = shared_experts x moe_intermediate_size).
  std::int64_t shared_intermediate_size = 0;
  double shared_width() const {
    return shared_intermediate_size > 0 ? static_cast<double>(shared_intermediate_size)
                                        : static_cast<double>(shared_experts * moe_intermediate_size);
  }
  std::int64_t vocab_size = 0;
  bool tie_word_embeddings = false;
  /// Price the small kernels between the GEMMs (norms, RoPE, quantisation, activation, permutation;
  /// layer_work.hpp's elementwise_work). Off by default: results stay comparable with earlier releases.
  bool elementwise_kernels = false;
  WeightFormat weight_format = WeightFormat::bf16;  ///< non-expert linear layers
  WeightFormat expert_format = WeightFormat::bf16;  ///< routed and shared experts
  std::int64_t kv_cache_bytes = 2;                  ///< bytes per KV-cache element
  /// Precision of the attention core's math (FP8: FlashMLA's / FlashAttention-3's FP8 kernels).
  hardware::Precision attention_precision = hardware::Precision::bf16;
  std::int64_t activation_bytes = 2;  ///< bytes per activation element (dispatch/combine payload)

  bool is_moe_layer(std::int64_t layer) const {
    return layer >= first_dense_layers && (layer - first_dense_layers) % moe_layer_step == moe_layer_step - 1;
  }
  std::int64_t num_moe_layers() const { return (num_layers - first_dense_layers) / moe_layer_step; }
  /// Whether `layer` uses chunked (local) attention.
  bool is_chunked_attention_layer(std::int64_t layer) const {
    return attention_chunk_size > 0 && (full_attention_every == 0 || (layer + 1) % full_attention_every != 0);
  }
  /// The attention layer `layer` runs.
  LayerAttention attention_of(std::int64_t layer) const {
    if (!layer_types.empty()) {
      return layer_types[static_cast<std::size_t>(layer)];
    }
    return is_chunked_attention_layer(layer) ? LayerAttention::chunked : LayerAttention::full;
  }
  /// Layers running attention `kind`.
  std::int64_t layers_of(LayerAttention kind) const {
    std::int64_t n = 0;
    for (std::int64_t l = 0; l < num_layers; ++l) {
      n += attention_of(l) == kind ? 1 : 0;
    }
    return n;
  }
  double weight_bytes() const { return weight_format_bytes(weight_format); }
  double expert_bytes() const { return weight_format_bytes(expert_format); }
  hardware::Precision weight_precision() const { return weight_format_precision(weight_format); }
  hardware::Precision expert_precision() const { return weight_format_precision(expert_format); }
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
