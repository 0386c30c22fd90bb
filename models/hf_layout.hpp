// SPDX-License-Identifier: Apache-2.0
#pragma once
// The pieces of a config.json that several families share: the table being built, the layer layout
// (which layers are MoE, which attention each layer runs) fitted to epsim's keys, and the weight formats
// of quantization_config.
#include <toml++/toml.h>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "models/hf_fields.hpp"

namespace epsim::models {

/// The [model] table being derived, keys kept in the order they were put.
struct HfOut {
  toml::table table;
  std::vector<std::string> order;
  std::span<const std::string> accepted;  ///< unknown fields the user accepts (JSON paths)
  std::vector<std::string> ignored;       ///< ignored fields of nested objects (quantization_config)
  void put(std::string_view key, std::int64_t value);
  void put(std::string_view key, bool value);
  void put(std::string_view key, std::string_view value);
  void put(std::string_view key, const std::vector<std::string>& values);
};

/// Puts first_dense_layers, moe_layer_step and (when some layer is dense) dense_intermediate_size for
/// the per-layer MoE flags `moe`; a pattern those keys cannot describe fails on `field` (the config field
/// that made it), as does one without a MoE layer.
void put_moe_layout(HfOut& out, const HfFields& f, std::string_view field, const std::vector<bool>& moe,
                    std::int64_t dense_intermediate_size);

/// Attention of one layer as epsim's layer_types names it.
enum class HfAttention : std::uint8_t { full, sliding, chunked, linear };

/// Puts layer_types unless every layer is "full" (Llama-4's chunked pattern of full_attention_every
/// puts attention_chunk_size and full_attention_every instead, as the existing presets do).
void put_attention_layout(HfOut& out, const std::vector<HfAttention>& layers, std::int64_t chunk_size);

/// Puts weight_dtype (always), expert_weight_dtype and kv_cache_dtype from `quantization_config`
/// (bf16 when absent); an unknown method or format fails naming its field.
void put_weight_formats(HfOut& out, HfFields& f);

/// Puts the attention shape of a GQA (or MHA) model: num_heads, num_kv_heads and head_dim (read, or
/// hidden_size / heads when the config leaves it out).
void put_gqa(HfOut& out, HfFields& f, std::int64_t hidden_size, std::string_view head_dim_field = "head_dim");

/// Fields every Hugging Face config may carry that never change the cost (token ids, generation
/// defaults, norms' epsilons, RoPE parameters, initialisation, dtype of the checkpoint, versions).
void ignore_common_fields(HfFields& f);

}  // namespace epsim::models
