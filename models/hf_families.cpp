// SPDX-License-Identifier: Apache-2.0
#include "models/hf_families.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

namespace epsim::models {
namespace {

using Accepted = std::span<const std::string>;
using Ignored = std::vector<std::string>;

// The per-layer MoE flags, their layout fitted to epsim's keys (see put_moe_layout).
std::vector<bool> all_layers(std::int64_t layers, bool value) {
  return std::vector<bool>(static_cast<std::size_t>(layers), value);
}

struct Experts {
  std::int64_t moe_intermediate_size = 0;
  std::int64_t routed = 0;
  std::int64_t shared = 0;
  std::int64_t shared_intermediate_size = 0;  ///< total width of the shared experts (0: shared x moe)
  std::int64_t top_k = 0;
  std::int64_t groups = 1;
  std::int64_t topk_group = 1;
};

void put_experts(HfOut& out, const HfFields& f, std::string_view top_k_field, const Experts& e) {
  if (e.top_k > e.routed) {
    f.fail(top_k_field, fmt::format("must be <= the routed experts ({}), got {}", e.routed, e.top_k));
  }
  out.put("moe_intermediate_size", e.moe_intermediate_size);
  out.put("routed_experts", e.routed);
  if (e.shared > 0) {
    out.put("shared_experts", e.shared);
    if (e.shared_intermediate_size != 0 && e.shared_intermediate_size != e.shared * e.moe_intermediate_size) {
      out.put("shared_intermediate_size", e.shared_intermediate_size);
    }
  }
  out.put("top_k", e.top_k);
  if (e.groups > 1) {
    out.put("expert_groups", e.groups);
    out.put("topk_group", e.topk_group);
  }
}

void put_tail(HfOut& out, HfFields& f) {
  out.put("vocab_size", f.integer("vocab_size"));
  if (f.boolean("tie_word_embeddings", false)) {
    out.put("tie_word_embeddings", true);
  }
  put_weight_formats(out, f);
}

// --- DeepSeek (MoE 16B, V2, V3, V3.2; Kimi-K2) and GLM-4.5 ---------------------------------------------

// DeepSeek's layout: layer i is MoE when i >= first_k_dense_replace and i % moe_layer_freq == 0.
std::vector<bool> deepseek_moe_layers(HfFields& f, std::int64_t layers) {
  const std::int64_t first = f.optional_integer("first_k_dense_replace").value_or(0);
  const std::int64_t freq = f.optional_integer("moe_layer_freq", 1).value_or(1);
  std::vector<bool> moe = all_layers(layers, false);
  for (std::int64_t i = 0; i < layers; ++i) {
    moe[static_cast<std::size_t>(i)] = i >= first && i % freq == 0;
  }
  return moe;
}

Experts deepseek_experts(HfFields& f) {
  Experts e;
  e.moe_intermediate_size = f.integer("moe_intermediate_size");
  e.routed = f.integer("n_routed_experts");
  e.shared = f.optional_integer("n_shared_experts").value_or(0);
  e.top_k = f.integer("num_experts_per_tok");
  // Group-limited routing: DeepSeek-V2's group_limited_greedy and V3's noaux_tc; greedy has no groups.
  const std::optional<std::string> method = f.optional_string("topk_method");
  const std::int64_t groups = f.optional_integer("n_group", 1).value_or(1);
  const std::int64_t topk_group = f.optional_integer("topk_group", 1).value_or(groups);
  if (method != "greedy" && groups > 1) {
    if (e.routed % groups != 0) {
      f.fail("n_group", fmt::format("must divide n_routed_experts ({}), got {}", e.routed, groups));
    }
    e.groups = groups;
    e.topk_group = topk_group;
  }
  return e;
}

void deepseek_common(HfFields& f, HfOut& out, bool mla) {
  ignore_common_fields(f);
  // Routing arithmetic (score function, normalisation, scaling), the expert-parallel size of training,
  // and the multi-token-prediction layers (not in the served forward pass) do not change the cost.
  f.ignore({"ep_size", "scoring_func", "norm_topk_prob", "routed_scaling_factor", "num_nextn_predict_layers",
            "attention_bias", "rope_interleave", "indexer_rope_interleave"});
  const std::int64_t hidden = f.integer("hidden_size");
  const std::int64_t layers = f.integer("num_hidden_layers", 1, k_max_hf_layers);
  out.put("hidden_size", hidden);
  out.put("num_layers", layers);
  const std::int64_t dense_width = f.integer("intermediate_size");
  const std::vector<bool> moe = deepseek_moe_layers(f, layers);
  const bool every = f.optional_integer("moe_layer_freq", 1).value_or(1) == 1;
  put_moe_layout(out, f, every ? "first_k_dense_replace" : "moe_layer_freq", moe, dense_width);
  put_experts(out, f, "num_experts_per_tok", deepseek_experts(f));
  if (!mla) {
    put_gqa(out, f, hidden);
  } else {
    f.ignore({"num_key_value_heads"});  // MLA's KV is the compressed latent, not per-head
    out.put("attention", std::string_view("mla"));
    out.put("num_heads", f.integer("num_attention_heads"));
    out.put("q_lora_rank", f.optional_integer("q_lora_rank").value_or(0));
    out.put("kv_lora_rank", f.integer("kv_lora_rank"));
    out.put("qk_nope_head_dim", f.integer("qk_nope_head_dim"));
    out.put("qk_rope_head_dim", f.integer("qk_rope_head_dim"));
    out.put("v_head_dim", f.integer("v_head_dim"));
    if (f.has("index_topk")) {
      out.put("index_n_heads", f.integer("index_n_heads"));
      out.put("index_head_dim", f.integer("index_head_dim"));
      out.put("index_topk", f.integer("index_topk"));
    }
  }
  put_tail(out, f);
}

void deepseek_v1(HfFields& f, HfOut& out, Accepted accepted, Ignored& ignored) {
  deepseek_common(f, out, false);
  f.finish(accepted, "DeepseekForCausalLM", ignored);
}

void deepseek_v2(HfFields& f, HfOut& out, Accepted accepted, Ignored& ignored) {
  deepseek_common(f, out, true);
  f.finish(accepted, "DeepseekV2ForCausalLM", ignored);
}

void deepseek_v3(HfFields& f, HfOut& out, Accepted accepted, Ignored& ignored) {
  deepseek_common(f, out, true);
  f.finish(accepted, "DeepseekV3ForCausalLM", ignored);
}

void deepseek_v32(HfFields& f, HfOut& out, Accepted accepted, Ignored& ignored) {
  if (!f.has("index_topk")) {
    f.fail("index_topk", "missing; DeepSeek-V3.2 needs the sparse-attention indexer's index_topk");
  }
  deepseek_common(f, out, true);
  f.finish(accepted, "DeepseekV32ForCausalLM", ignored);
}

void glm4_moe(HfFields& f, HfOut& out, Accepted accepted, Ignored& ignored) {
  // GLM's partial RoPE and QK norm are elementwise; its layout and experts are DeepSeek-V3's.
  f.ignore({"partial_rotary_factor", "use_qk_norm", "topk_method"});
  deepseek_common(f, out, false);
  f.finish(accepted, "Glm4MoeForCausalLM", ignored);
}

// --- Qwen2-MoE, Qwen3-MoE, Qwen3-Next --------------------------------------------------------------

// Qwen's layout: layer i is MoE unless listed in mlp_only_layers, every decoder_sparse_step-th layer.
std::vector<bool> qwen_moe_layers(HfFields& f, std::int64_t layers) {
  const std::int64_t step = f.optional_integer("decoder_sparse_step", 1).value_or(1);
  const std::vector<std::int64_t> mlp_only = f.integer_list("mlp_only_layers");
  std::vector<bool> moe = all_layers(layers, false);
  for (std::int64_t i = 0; i < layers; ++i) {
    const bool listed = std::find(mlp_only.begin(), mlp_only.end(), i) != mlp_only.end();
    moe[static_cast<std::size_t>(i)] = !listed && (i + 1) % step == 0;
  }
  return moe;
}

// Qwen2/3's sliding window: with use_sliding_window, layers from max_window_layers on see the window.
std::vector<HfAttention> qwen_sliding(HfFields& f, std::int64_t layers, bool& sliding) {
  std::vector<HfAttention> types(static_cast<std::size_t>(layers), HfAttention::full);
  sliding = f.boolean("use_sliding_window", false);
  if (!sliding) {
    f.ignore({"sliding_window", "max_window_layers"});  // read by attention only with use_sliding_window
    return types;
  }
  const std::int64_t from = f.integer("max_window_layers", 0);
  for (std::int64_t i = from; i < layers; ++i) {
    types[static_cast<std::size_t>(i)] = HfAttention::sliding;
  }
  sliding = from < layers;
  if (!sliding) {
    f.ignore({"sliding_window"});
  }
  return types;
}

void qwen_moe(HfFields& f, HfOut& out, bool next) {
  ignore_common_fields(f);
  f.ignore({"norm_topk_prob", "attention_bias", "qkv_bias", "partial_rotary_factor"});
  const std::int64_t hidden = f.integer("hidden_size");
  const std::int64_t layers = f.integer("num_hidden_layers", 1, k_max_hf_layers);
  out.put("hidden_size", hidden);
  out.put("num_layers", layers);
  const std::int64_t dense_width = f.integer("intermediate_size");
  put_moe_layout(out, f, "mlp_only_layers", qwen_moe_layers(f, layers), dense_width);
  Experts e;
  e.moe_intermediate_size = f.integer("moe_intermediate_size");
  e.routed = f.integer("num_experts");
  e.top_k = f.integer("num_experts_per_tok");
  if (const std::int64_t width = f.optional_integer("shared_expert_intermediate_size").value_or(0); width > 0) {
    e.shared = 1;  // one shared expert of its own width (Qwen2-MoE: 4 x the routed width)
    e.shared_intermediate_size = width;
  }
  put_experts(out, f, "num_experts_per_tok", e);
  put_gqa(out, f, hidden);
  bool sliding = false;
  std::vector<HfAttention> types = qwen_sliding(f, layers, sliding);
  if (next) {
    // Qwen3-Next: Gated DeltaNet layers, with full (gated) attention every full_attention_interval-th.
    out.put("attention_output_gate", true);
    const std::vector<std::string> named = f.string_list("layer_types");
    if (!named.empty()) {
      if (static_cast<std::int64_t>(named.size()) != layers) {
        f.fail("layer_types", fmt::format("expected {} entries (num_hidden_layers), got {}", layers, named.size()));
      }
      f.ignore({"full_attention_interval"});
      for (std::size_t i = 0; i < named.size(); ++i) {
        if (named[i] == "linear_attention") {
          types[i] = HfAttention::linear;
        } else if (named[i] != "full_attention") {
          f.fail("layer_types",
                 fmt::format("entry {} is \"{}\"; expected linear_attention or full_attention", i, named[i]));
        }
      }
    } else {
      const std::int64_t interval = f.optional_integer("full_attention_interval", 1).value_or(4);
      for (std::int64_t i = 0; i < layers; ++i) {
        if ((i + 1) % interval != 0) {
          types[static_cast<std::size_t>(i)] = HfAttention::linear;
        }
      }
    }
    put_attention_layout(out, types, 0);
    out.put("linear_attention", std::string_view("gated_deltanet"));
    out.put("linear_num_key_heads", f.integer("linear_num_key_heads"));
    out.put("linear_num_value_heads", f.integer("linear_num_value_heads"));
    out.put("linear_key_head_dim", f.integer("linear_key_head_dim"));
    out.put("linear_value_head_dim", f.integer("linear_value_head_dim"));
    out.put("linear_conv_kernel_dim", f.integer("linear_conv_kernel_dim", 0));
  } else {
    put_attention_layout(out, types, 0);
  }
  if (sliding) {
    out.put("sliding_window", f.integer("sliding_window"));
  }
  put_tail(out, f);
}

void qwen2_moe(HfFields& f, HfOut& out, Accepted accepted, Ignored& ignored) {
  qwen_moe(f, out, false);
  f.finish(accepted, "Qwen2MoeForCausalLM", ignored);
}

void qwen3_moe(HfFields& f, HfOut& out, Accepted accepted, Ignored& ignored) {
  qwen_moe(f, out, false);
  f.finish(accepted, "Qwen3MoeForCausalLM", ignored);
}

void qwen3_next(HfFields& f, HfOut& out, Accepted accepted, Ignored& ignored) {
  qwen_moe(f, out, true);
  f.finish(accepted, "Qwen3NextForCausalLM", ignored);
}

// --- Mixtral, OLMoE: every layer MoE, no shared expert ----------------------------------------------

void every_layer_moe(HfFields& f, HfOut& out, std::string_view experts_field) {
  ignore_common_fields(f);
  f.ignore({"norm_topk_prob", "attention_bias", "clip_qkv", "router_jitter_noise"});
  const std::int64_t hidden = f.integer("hidden_size");
  const std::int64_t layers = f.integer("num_hidden_layers", 1, k_max_hf_layers);
  out.put("hidden_size", hidden);
  out.put("num_layers", layers);
  Experts e;
  e.moe_intermediate_size = f.integer("intermediate_size");
  e.routed = f.integer(experts_field);
  e.top_k = f.integer("num_experts_per_tok");
  put_experts(out, f, "num_experts_per_tok", e);
  put_gqa(out, f, hidden);
  // Mistral's sliding window (null in Mixtral's releases) applies to every layer.
  if (const std::optional<std::int64_t> window = f.optional_integer("sliding_window", 1)) {
    put_attention_layout(out, std::vector<HfAttention>(static_cast<std::size_t>(layers), HfAttention::sliding), 0);
    out.put("sliding_window", *window);
  }
  put_tail(out, f);
}

void mixtral(HfFields& f, HfOut& out, Accepted accepted, Ignored& ignored) {
  every_layer_moe(f, out, "num_local_experts");
  f.finish(accepted, "MixtralForCausalLM", ignored);
}

void olmoe(HfFields& f, HfOut& out, Accepted accepted, Ignored& ignored) {
  every_layer_moe(f, out, "num_experts");
  f.finish(accepted, "OlmoeForCausalLM", ignored);
}

// --- gpt-oss ---------------------------------------------------------------------------------------

void gpt_oss(HfFields& f, HfOut& out, Accepted accepted, Ignored& ignored) {
  ignore_common_fields(f);
  // SwiGLU's clamp, the attention biases and the context length it was trained at do not change the cost.
  f.ignore({"swiglu_limit", "attention_bias", "initial_context_length"});
  const std::int64_t hidden = f.integer("hidden_size");
  const std::int64_t layers = f.integer("num_hidden_layers", 1, k_max_hf_layers);
  out.put("hidden_size", hidden);
  out.put("num_layers", layers);
  Experts e;
  e.moe_intermediate_size = f.integer("intermediate_size");
  e.routed = f.integer("num_local_experts");
  e.top_k = f.integer("num_experts_per_tok");
  if (const std::optional<std::int64_t> also = f.optional_integer("experts_per_token"); also && *also != e.top_k) {
    f.fail("experts_per_token", fmt::format("must equal num_experts_per_tok ({}), got {}", e.top_k, *also));
  }
  put_experts(out, f, "num_experts_per_tok", e);
  put_gqa(out, f, hidden);
  const std::vector<std::string> named = f.string_list("layer_types");
  if (static_cast<std::int64_t>(named.size()) != layers) {
    f.fail("layer_types", fmt::format("expected {} entries (num_hidden_layers), got {}", layers, named.size()));
  }
  std::vector<HfAttention> types;
  for (std::size_t i = 0; i < named.size(); ++i) {
    if (named[i] == "sliding_attention") {
      types.push_back(HfAttention::sliding);
    } else if (named[i] == "full_attention") {
      types.push_back(HfAttention::full);
    } else {
      f.fail("layer_types",
             fmt::format("entry {} is \"{}\"; expected sliding_attention or full_attention", i, named[i]));
    }
  }
  put_attention_layout(out, types, 0);
  if (std::find(types.begin(), types.end(), HfAttention::sliding) != types.end()) {
    out.put("sliding_window", f.integer("sliding_window"));
  } else {
    f.ignore({"sliding_window"});
  }
  out.put("attention_sinks", true);  // every gpt-oss attention layer has learned per-head sinks
  put_tail(out, f);
  f.finish(accepted, "GptOssForCausalLM", ignored);
}

// --- Llama-4 -----------------------------------------------------------------------------------------

void llama4_text(HfFields& f, HfOut& out, std::string_view family, Accepted accepted, Ignored& ignored) {
  ignore_common_fields(f);
  // Attention temperature tuning, QK norm and the router's noise are elementwise or training-only.
  f.ignore({"attn_temperature_tuning", "floor_scale", "attn_scale", "use_qk_norm", "router_jitter_noise",
            "attention_bias", "for_llm_compressor"});
  const std::int64_t hidden = f.integer("hidden_size");
  const std::int64_t layers = f.integer("num_hidden_layers", 1, k_max_hf_layers);
  out.put("hidden_size", hidden);
  out.put("num_layers", layers);
  // moe_layers, else every interleave_moe_layer_step-th layer (transformers' Llama4TextConfig).
  std::vector<bool> moe = all_layers(layers, false);
  std::string_view layout_field = "interleave_moe_layer_step";
  if (f.has("moe_layers")) {
    layout_field = "moe_layers";
    f.ignore({"interleave_moe_layer_step"});
    for (const std::int64_t i : f.integer_list("moe_layers")) {
      if (i >= layers) {
        f.fail("moe_layers", fmt::format("names layer {} of a model of {} layers", i, layers));
      }
      moe[static_cast<std::size_t>(i)] = true;
    }
  } else {
    const std::int64_t step = f.optional_integer("interleave_moe_layer_step", 1).value_or(1);
    for (std::int64_t i = step - 1; i < layers; i += step) {
      moe[static_cast<std::size_t>(i)] = true;
    }
  }
  const std::int64_t expert_width = f.integer("intermediate_size");
  put_moe_layout(out, f, layout_field, moe, f.integer("intermediate_size_mlp"));
  Experts e;
  e.moe_intermediate_size = expert_width;
  e.routed = f.integer("num_local_experts");
  e.shared = 1;  // Llama-4's MoE layers add one always-on shared expert of the routed width
  e.top_k = f.integer("num_experts_per_tok");
  put_experts(out, f, "num_experts_per_tok", e);
  put_gqa(out, f, hidden);
  // RoPE layers attend in chunks of attention_chunk_size; the NoPE layers (no_rope_layers[i] = 0, by
  // default every no_rope_layer_interval-th) attend globally.
  std::vector<HfAttention> types(static_cast<std::size_t>(layers), HfAttention::full);
  if (const std::optional<std::int64_t> chunk = f.optional_integer("attention_chunk_size", 1)) {
    std::vector<std::int64_t> rope = f.integer_list("no_rope_layers");
    if (rope.empty()) {
      const std::int64_t interval = f.optional_integer("no_rope_layer_interval", 1).value_or(4);
      for (std::int64_t i = 0; i < layers; ++i) {
        rope.push_back((i + 1) % interval != 0 ? 1 : 0);
      }
    } else {
      f.ignore({"no_rope_layer_interval"});
      if (static_cast<std::int64_t>(rope.size()) != layers) {
        f.fail("no_rope_layers", fmt::format("expected {} entries (num_hidden_layers), got {}", layers, rope.size()));
      }
    }
    for (std::size_t i = 0; i < rope.size(); ++i) {
      types[i] = rope[i] != 0 ? HfAttention::chunked : HfAttention::full;
    }
    put_attention_layout(out, types, *chunk);
  } else {
    f.ignore({"no_rope_layers", "no_rope_layer_interval"});
  }
  put_tail(out, f);
  f.finish(accepted, family, ignored);
}

void llama4_causal(HfFields& f, HfOut& out, Accepted accepted, Ignored& ignored) {
  llama4_text(f, out, "Llama4ForCausalLM", accepted, ignored);
}

// A multimodal wrapper: the language model is text_config; the vision tower only encodes images, which
// epsim's text requests do not carry.
void llama4_conditional(HfFields& f, HfOut& out, Accepted accepted, Ignored& ignored) {
  ignore_common_fields(f);
  f.ignore({"vision_config", "boi_token_index", "eoi_token_index", "image_token_index"});
  const nlohmann::json* text = f.object("text_config");
  if (text == nullptr) {
    f.fail("text_config", "missing; expected the language model's config");
  }
  const bool tied = f.boolean("tie_word_embeddings", false);
  HfFields t(*text, f.file(), f.path("text_config") + ".");
  llama4_text(t, out, "Llama4ForConditionalGeneration text_config", accepted, ignored);
  if (tied && !out.table.contains("tie_word_embeddings")) {
    out.put("tie_word_embeddings", true);
  }
  f.finish(accepted, "Llama4ForConditionalGeneration", ignored);
}

// --- Kimi-K2.5: DeepSeek-V3's language model in text_config, with a vision tower -------------------------

void kimi_k25(HfFields& f, HfOut& out, Accepted accepted, Ignored& ignored) {
  ignore_common_fields(f);
  f.ignore({"vision_config", "ignore_index", "media_placeholder_token_id", "use_unified_vision_chunk",
            "video_placeholder", "tie_word_embeddings"});
  const nlohmann::json* text = f.object("text_config");
  if (text == nullptr) {
    f.fail("text_config", "missing; expected the language model's config");
  }
  HfFields t(*text, f.file(), f.path("text_config") + ".");
  const std::vector<std::string> archs = t.string_list("architectures");
  if (archs.empty() || archs.front() != "DeepseekV3ForCausalLM") {
    t.fail("architectures", "expected [\"DeepseekV3ForCausalLM\"], the language model Kimi-K2.5 wraps");
  }
  deepseek_common(t, out, true);
  t.finish(accepted, "KimiK25ForConditionalGeneration text_config", ignored);
  f.finish(accepted, "KimiK25ForConditionalGeneration", ignored);
}

// --- MiniMax (M2: full attention; Text-01 / M1: lightning linear attention with softmax layers) ----------

void minimax(HfFields& f, HfOut& out, std::string_view family, Accepted accepted, Ignored& ignored) {
  ignore_common_fields(f);
  // Partial RoPE, QK norm, the routing bias, the multi-token-prediction modules, the residual scalings
  // (alpha/beta) and the lightning kernel's block size do not change the work priced.
  f.ignore({"rotary_dim", "use_qk_norm", "qk_norm_type", "use_routing_bias", "scoring_func", "use_mtp",
            "num_mtp_modules", "mtp_transformer_layers", "layernorm_full_attention_alpha",
            "layernorm_full_attention_beta", "layernorm_linear_attention_alpha", "layernorm_linear_attention_beta",
            "layernorm_mlp_alpha", "layernorm_mlp_beta", "postnorm", "block_size"});
  const std::int64_t hidden = f.integer("hidden_size");
  const std::int64_t layers = f.integer("num_hidden_layers", 1, k_max_hf_layers);
  out.put("hidden_size", hidden);
  out.put("num_layers", layers);
  Experts e;
  e.moe_intermediate_size = f.integer("intermediate_size");
  e.routed = f.integer("num_local_experts");
  e.top_k = f.integer("num_experts_per_tok");
  if (const std::int64_t width = f.optional_integer("shared_intermediate_size").value_or(0); width > 0) {
    e.shared = 1;
    e.shared_intermediate_size = width;
  }
  put_experts(out, f, "num_experts_per_tok", e);
  put_gqa(out, f, hidden);
  // attn_type_list: 1 = softmax attention, 0 = lightning (linear) attention, one entry per layer.
  std::vector<HfAttention> types(static_cast<std::size_t>(layers), HfAttention::full);
  if (f.has("attn_type_list")) {
    const std::vector<std::int64_t> kinds = f.integer_list("attn_type_list");
    if (static_cast<std::int64_t>(kinds.size()) != layers) {
      f.fail("attn_type_list", fmt::format("expected {} entries (num_hidden_layers), got {}", layers, kinds.size()));
    }
    for (std::size_t i = 0; i < kinds.size(); ++i) {
      if (kinds[i] > 1) {
        f.fail("attn_type_list",
               fmt::format("entry {} is {}; expected 0 (lightning attention) or 1 (softmax attention)", i, kinds[i]));
      }
      types[i] = kinds[i] == 0 ? HfAttention::linear : HfAttention::full;
    }
  } else {
    f.mark("attn_type_list");
  }
  if (f.optional_integer("sliding_window", 1)) {
    f.fail("sliding_window", "a MiniMax sliding window is not one epsim reads; expected null");
  }
  put_attention_layout(out, types, 0);
  if (std::find(types.begin(), types.end(), HfAttention::linear) != types.end()) {
    // Lightning attention: one key and one value head per query head, no short convolution.
    const std::int64_t heads = out.table["num_heads"].value_or<std::int64_t>(0);
    const std::int64_t head_dim = out.table["head_dim"].value_or<std::int64_t>(0);
    out.put("linear_attention", std::string_view("lightning"));
    out.put("linear_num_key_heads", heads);
    out.put("linear_num_value_heads", heads);
    out.put("linear_key_head_dim", head_dim);
    out.put("linear_value_head_dim", head_dim);
    out.put("linear_conv_kernel_dim", std::int64_t{0});
  }
  put_tail(out, f);
  f.finish(accepted, family, ignored);
}

void minimax_m2(HfFields& f, HfOut& out, Accepted accepted, Ignored& ignored) {
  minimax(f, out, "MiniMaxM2ForCausalLM", accepted, ignored);
}
void minimax_text01(HfFields& f, HfOut& out, Accepted accepted, Ignored& ignored) {
  minimax(f, out, "MiniMaxText01ForCausalLM", accepted, ignored);
}
void minimax_m1(HfFields& f, HfOut& out, Accepted accepted, Ignored& ignored) {
  minimax(f, out, "MiniMaxM1ForCausalLM", accepted, ignored);
}
void minimax_hf(HfFields& f, HfOut& out, Accepted accepted, Ignored& ignored) {
  minimax(f, out, "MiniMaxForCausalLM", accepted, ignored);
}

// --- Hunyuan MoE (Hunyuan-A13B) ------------------------------------------------------------------------

void hunyuan_moe(HfFields& f, HfOut& out, Accepted accepted, Ignored& ignored) {
  ignore_common_fields(f);
  f.ignore({"attention_bias",
            "mlp_bias",
            "use_qk_norm",
            "norm_type",
            "use_rotary_pos_emb",
            "eod_token_id",
            "im_start_id",
            "im_end_id",
            "text_start_id",
            "text_end_id",
            "image_token_id",
            "video_start_id",
            "video_end_id",
            "im_newline_id",
            "mask_init_id",
            "moe_drop_tokens",
            "moe_random_routing_dropped_token",
            "capacity_factor",
            "moe_router_enable_expert_bias",
            "moe_router_use_sigmoid",
            "position_embedding_xdrope",
            "org_vocab_size",
            "classifier_output_dim",
            "group_limited_greedy",
            "num_media_embeds",
            "skip_cls_token",
            "add_classification_head",
            "anyres_pooling_size",
            "anyres_vit_max_image_size",
            "anyres_vit_two_views"});
  // Cross-layer attention shares one layer's KV with the next: epsim's KV cache is per layer.
  if (f.boolean("use_cla", false)) {
    f.fail("use_cla", "cross-layer KV sharing (CLA) is not one epsim prices; expected false");
  }
  f.ignore({"cla_share_factor"});
  const std::int64_t hidden = f.integer("hidden_size");
  const std::int64_t layers = f.integer("num_hidden_layers", 1, k_max_hf_layers);
  out.put("hidden_size", hidden);
  out.put("num_layers", layers);
  if (f.optional_integer("moe_layer_num_skipped").value_or(0) != 0) {
    f.fail("moe_layer_num_skipped", "expected 0: every Hunyuan layer MoE");
  }
  Experts e;
  e.routed = f.uniform_integer("num_experts", layers);
  e.top_k = f.uniform_integer("moe_topk", layers);
  const std::int64_t width = f.integer("intermediate_size");
  e.moe_intermediate_size = width;
  if (f.has("moe_intermediate_size")) {
    e.moe_intermediate_size = f.uniform_integer("moe_intermediate_size", layers);
  }
  // use_mixed_mlp_moe adds num_shared_expert shared MLPs of intermediate_size each.
  if (f.boolean("use_mixed_mlp_moe", false)) {
    e.shared = f.uniform_integer("num_shared_expert", layers);
    e.shared_intermediate_size = e.shared * width;
  } else {
    f.ignore({"num_shared_expert"});
  }
  put_experts(out, f, "moe_topk", e);
  // The remote-code config names the head dim attention_head_dim, transformers' head_dim.
  if (f.has("attention_head_dim") && f.has("head_dim") && f.integer("attention_head_dim") != f.integer("head_dim")) {
    f.fail("attention_head_dim", "differs from head_dim");
  }
  put_gqa(out, f, hidden, f.has("attention_head_dim") ? "attention_head_dim" : "head_dim");
  put_tail(out, f);
  f.finish(accepted, "HunYuanMoEV1ForCausalLM", ignored);
}

constexpr std::array<HfFamily, 19> k_families{{
    {"DeepseekForCausalLM", deepseek_v1},
    {"DeepseekV2ForCausalLM", deepseek_v2},
    {"DeepseekV3ForCausalLM", deepseek_v3},
    {"DeepseekV32ForCausalLM", deepseek_v32},
    {"KimiK25ForConditionalGeneration", kimi_k25},
    {"Glm4MoeForCausalLM", glm4_moe},
    {"Qwen2MoeForCausalLM", qwen2_moe},
    {"Qwen3MoeForCausalLM", qwen3_moe},
    {"Qwen3NextForCausalLM", qwen3_next},
    {"MixtralForCausalLM", mixtral},
    {"OlmoeForCausalLM", olmoe},
    {"GptOssForCausalLM", gpt_oss},
    {"Llama4ForConditionalGeneration", llama4_conditional},
    {"Llama4ForCausalLM", llama4_causal},
    {"MiniMaxM2ForCausalLM", minimax_m2},
    {"MiniMaxText01ForCausalLM", minimax_text01},
    {"MiniMaxM1ForCausalLM", minimax_m1},
    {"MiniMaxForCausalLM", minimax_hf},
    {"HunYuanMoEV1ForCausalLM", hunyuan_moe},
}};

}  // namespace

std::span<const HfFamily> hf_families() {
  return k_families;
}

const HfFamily* find_hf_family(std::string_view architecture) {
  const auto it = std::find_if(k_families.begin(), k_families.end(),
                               [&](const HfFamily& fam) { return fam.architecture == architecture; });
  return it == k_families.end() ? nullptr : &*it;
}

}  // namespace epsim::models
