// SPDX-License-Identifier: Apache-2.0
#include "models/model_spec.hpp"

#include <array>
#include <span>
#include <string_view>

#include "core/error.hpp"
#include "models/hf_config.hpp"

namespace epsim::models {

std::span<const core::EmbeddedFile> embedded_models();

namespace {
constexpr std::array<core::Choice<AttentionKind>, 2> k_attention_kinds{
    {{"gqa", AttentionKind::gqa}, {"mla", AttentionKind::mla}}};
// A dtype read as its width in bytes.
constexpr std::array<core::Choice<std::int64_t>, 2> k_dtypes{{{"bf16", 2}, {"fp8", 1}}};
constexpr std::array<std::string_view, 6> k_expert_dtype_names{"", "bf16", "fp8", "mxfp4", "nvfp4", "int4"};
constexpr std::array<core::Choice<hardware::Precision>, 2> k_attention_dtypes{
    {{"bf16", hardware::Precision::bf16}, {"fp8", hardware::Precision::fp8}}};
constexpr std::array<core::Choice<LinearAttentionKind>, 2> k_linear_kinds{
    {{"gated_deltanet", LinearAttentionKind::gated_deltanet}, {"lightning", LinearAttentionKind::lightning}}};
constexpr std::array<core::Choice<LayerAttention>, k_layer_attentions> k_layer_attention_names{
    {{"full", LayerAttention::full},
     {"sliding", LayerAttention::sliding},
     {"chunked", LayerAttention::chunked},
     {"linear", LayerAttention::linear}}};

// The layer_types list as typed values; an unknown name fails naming its index and the valid names.
std::vector<LayerAttention> parse_layer_types(core::ParamTable& t, std::int64_t num_layers) {
  const std::vector<std::string> names = t.string_list(
      "layer_types",
      "each layer's attention, num_layers entries of full | sliding | chunked | linear (absent: chunked where "
      "attention_chunk_size and full_attention_every say so, else full)");
  if (names.empty() || t.documenting()) {
    return {};
  }
  if (static_cast<std::int64_t>(names.size()) != num_layers) {
    t.fail("layer_types",
           "must have num_layers (" + std::to_string(num_layers) + ") entries, got " + std::to_string(names.size()));
  }
  std::vector<LayerAttention> out;
  out.reserve(names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    bool known = false;
    for (const auto& c : k_layer_attention_names) {
      if (c.name == names[i]) {
        out.push_back(c.value);
        known = true;
      }
    }
    if (!known) {
      t.fail("layer_types",
             "entry " + std::to_string(i) + " is '" + names[i] + "'; expected one of full, sliding, chunked, linear");
    }
  }
  return out;
}
constexpr core::IntBounds k_dim{1, 1 << 20};
}  // namespace

namespace {
// The per-layer mechanisms' own fields, required exactly where some layer uses them.
void check_layer_mechanisms(core::ParamTable& t, ModelSpec& m) {
  if (!m.layer_types.empty() && m.attention_chunk_size == 0 && m.layers_of(LayerAttention::chunked) > 0) {
    t.fail("attention_chunk_size", "must be > 0 when layer_types has chunked layers");
  }
  if (m.layers_of(LayerAttention::sliding) > 0 && m.sliding_window == 0) {
    t.fail("sliding_window", "must be > 0 when layer_types has sliding layers");
  }
  if (m.layers_of(LayerAttention::linear) > 0) {
    if (m.linear_num_key_heads == 0 || m.linear_key_head_dim == 0) {
      t.fail("linear_num_key_heads", "linear layers need linear_num_key_heads and linear_key_head_dim > 0");
    }
    if (m.linear_num_value_heads == 0) {
      m.linear_num_value_heads = m.linear_num_key_heads;
    }
    if (m.linear_value_head_dim == 0) {
      m.linear_value_head_dim = m.linear_key_head_dim;
    }
    if (m.linear_num_value_heads % m.linear_num_key_heads != 0) {
      t.fail("linear_num_value_heads",
             "must be a multiple of linear_num_key_heads (" + std::to_string(m.linear_num_key_heads) + ")");
    }
  }
  // Memory is planned per token of the layers whose KV grows; a model of sliding and linear layers only has
  // none, and its per-request state alone is not modelled.
  if (m.layers_of(LayerAttention::full) + m.layers_of(LayerAttention::chunked) == 0) {
    t.fail("layer_types", "needs at least one full or chunked layer (a KV cache that grows with the context)");
  }
  if (m.sparse_attention()) {
    if (m.attention != AttentionKind::mla) {
      t.fail("index_topk", "DeepSeek Sparse Attention is modelled on MLA only (attention = \"mla\")");
    }
    if (m.index_n_heads == 0 || m.index_head_dim == 0) {
      t.fail("index_topk", "DeepSeek Sparse Attention needs index_n_heads and index_head_dim > 0");
    }
  }
  if (m.attention_output_gate && m.attention != AttentionKind::gqa) {
    t.fail("attention_output_gate", "is modelled for GQA attention only");
  }
}
}  // namespace

namespace {
// Issue 39's per-layer mechanisms: layer kinds, sliding windows, gates, linear attention, DSA's indexer,
// the shared experts' width.
void read_layer_mechanisms(core::ParamTable& t, ModelSpec& m) {
  m.layer_types = parse_layer_types(t, m.num_layers);
  m.sliding_window =
      t.integer("sliding_window", 0,
                "keys a sliding layer's query sees, itself included (required with sliding layers)", {0, 1 << 24});
  m.attention_sinks =
      t.boolean("attention_sinks", false, "learned per-head sink logits (gpt-oss): no KV, cost left out");
  m.attention_output_gate =
      t.boolean("attention_output_gate", false, "q_proj also emits a sigmoid output gate per head dim (Qwen3-Next)");
  m.linear_kind = t.choice<LinearAttentionKind>("linear_attention", LinearAttentionKind::gated_deltanet,
                                                "recurrence of the linear layers", k_linear_kinds);
  m.linear_num_key_heads = t.integer("linear_num_key_heads", 0,
                                     "query/key heads of a linear layer (required with linear layers)", {0, 4096});
  m.linear_num_value_heads =
      t.integer("linear_num_value_heads", 0,
                "value heads (= state matrices) of a linear layer (0 = linear_num_key_heads)", {0, 4096});
  m.linear_key_head_dim = t.integer("linear_key_head_dim", 0,
                                    "query/key head dim of a linear layer (required with linear layers)", {0, 4096});
  m.linear_value_head_dim =
      t.integer("linear_value_head_dim", 0, "value head dim of a linear layer (0 = linear_key_head_dim)", {0, 4096});
  m.linear_conv_kernel_dim = t.integer("linear_conv_kernel_dim", 0,
                                       "causal conv width of a linear layer (Gated DeltaNet: 4; 0 = none)", {0, 64});
  m.index_n_heads = t.integer("index_n_heads", 0, "DeepSeek Sparse Attention: indexer heads", {0, 4096});
  m.index_head_dim = t.integer("index_head_dim", 0, "DeepSeek Sparse Attention: indexer head dim", {0, 4096});
  m.index_topk =
      t.integer("index_topk", 0, "DeepSeek Sparse Attention: past tokens each query attends to (0 = dense attention)",
                {0, 1 << 24});
  m.shared_intermediate_size =
      t.integer("shared_intermediate_size", 0,
                "total FFN width of the shared experts (0 = shared_experts x moe_intermediate_size)", {0, 1 << 20});
}

// The weights', KV cache's and attention math's number formats.
void read_number_formats(core::ParamTable& t, ModelSpec& m) {
  m.weight_format = t.choice<WeightFormat>("weight_dtype", WeightFormat::bf16,
                                           "format of the weights of the non-expert linear layers (and of the "
                                           "experts unless expert_weight_dtype says otherwise)",
                                           k_weight_formats);
  const std::string expert_dtype =
      t.choice("expert_weight_dtype", "", "format of the routed and shared experts' weights (\"\" = weight_dtype)",
               k_expert_dtype_names);
  m.expert_format = m.weight_format;
  for (const auto& c : k_weight_formats) {  // "" (= weight_dtype) is the one name not among them
    m.expert_format = c.name == expert_dtype ? c.value : m.expert_format;
  }
  m.kv_cache_bytes = t.choice<std::int64_t>("kv_cache_dtype", 2, "dtype of the KV cache", k_dtypes);
  m.attention_precision = t.choice<hardware::Precision>("attention_dtype", hardware::Precision::bf16,
                                                        "precision of the attention core's math", k_attention_dtypes);
}
}  // namespace

ModelSpec parse_model_spec(core::ParamTable& t) {
  ModelSpec m;
  m.name = t.string("name", "", "display name");
  m.hidden_size = t.integer_required("hidden_size", "model (residual) width", k_dim);
  m.num_layers = t.integer_required("num_layers", "transformer layers", {1, 1000});
  m.first_dense_layers =
      t.integer("first_dense_layers", 0, "leading layers with a dense FFN (DeepSeek first_k_dense_replace)", {0, 1000});
  m.dense_intermediate_size = t.integer("dense_intermediate_size", 0,
                                        "FFN width of the dense layers (required when there are some)", {0, 1 << 20});
  m.moe_layer_step =
      t.integer("moe_layer_step", 1, "every step-th layer after the dense ones is MoE (Llama-4 interleave)", {1, 64});
  m.moe_intermediate_size = t.integer_required("moe_intermediate_size", "FFN width of one expert", k_dim);
  m.routed_experts = t.integer_required("routed_experts", "routed experts per MoE layer", {1, 65536});
  m.shared_experts = t.integer("shared_experts", 0, "always-active shared experts per MoE layer", {0, 64});
  m.top_k = t.integer_required("top_k", "routed experts activated per token (<= routed_experts)", {1, 65536});
  m.expert_groups =
      t.integer("expert_groups", 1,
                "expert groups for group-limited routing (DeepSeek n_group); must divide routed_experts", {1, 65536});
  m.topk_group =
      t.integer("topk_group", 0,
                "groups a token's top-k experts come from at most (DeepSeek topk_group; 0 = expert_groups: no limit); "
                "topk_group x experts per group must be >= top_k, and a replayed trace is checked against it",
                {0, 65536});
  m.attention = t.choice<AttentionKind>("attention", AttentionKind::gqa, "attention kind", k_attention_kinds);
  m.num_heads = t.integer_required("num_heads", "attention (query) heads", {1, 4096});
  m.num_kv_heads = t.integer("num_kv_heads", 0, "key/value heads (GQA; 0 = num_heads)", {0, 4096});
  m.head_dim = t.integer("head_dim", 0, "dimension of one head (GQA; 0 = hidden_size / num_heads)", {0, 4096});
  m.q_lora_rank = t.integer("q_lora_rank", 0, "MLA query compression rank (0 = none)", {0, 1 << 16});
  m.kv_lora_rank = t.integer("kv_lora_rank", 0, "MLA compressed KV rank", {0, 1 << 16});
  m.qk_nope_head_dim = t.integer("qk_nope_head_dim", 0, "MLA non-rotary query/key head dim", {0, 4096});
  m.qk_rope_head_dim = t.integer("qk_rope_head_dim", 0, "MLA rotary query/key head dim", {0, 4096});
  m.v_head_dim = t.integer("v_head_dim", 0, "MLA value head dim", {0, 4096});
  m.attention_chunk_size =
      t.integer("attention_chunk_size", 0, "local attention window of chunked layers (0 = none)", {0, 1 << 24});
  m.full_attention_every =
      t.integer("full_attention_every", 0, "with chunks: every n-th layer attends globally (0 = none)", {0, 1024});
  read_layer_mechanisms(t, m);
  m.vocab_size = t.integer_required("vocab_size", "vocabulary size", {1, 1 << 24});
  m.tie_word_embeddings =
      t.boolean("tie_word_embeddings", false, "the LM head shares the embedding matrix (parameter and weight counts)");
  m.elementwise_kernels =
      t.boolean("elementwise_kernels", false,
                "price the norm, RoPE, quantisation, activation and permutation kernels between the GEMMs "
                "(docs/model.md)");
  read_number_formats(t, m);
  m.activation_bytes = 2;
  if (t.documenting()) {
    return m;  // the required fields read as 0: no check below means anything yet
  }

  if (m.top_k > m.routed_experts) {
    t.fail("top_k",
           "must be <= routed_experts (" + std::to_string(m.routed_experts) + "), got " + std::to_string(m.top_k));
  }
  if (m.first_dense_layers >= m.num_layers) {
    t.fail("first_dense_layers", "must be < num_layers (" + std::to_string(m.num_layers) + ") so some layer is MoE");
  }
  if ((m.first_dense_layers > 0 || m.moe_layer_step > 1) && m.dense_intermediate_size == 0) {
    t.fail("dense_intermediate_size", "must be > 0 when the model has dense layers");
  }
  if (m.num_moe_layers() == 0) {
    t.fail("moe_layer_step", "leaves no MoE layer");
  }
  if (m.routed_experts % m.expert_groups != 0) {
    t.fail("expert_groups", "must divide routed_experts (" + std::to_string(m.routed_experts) + ")");
  }
  if (m.topk_group == 0) {
    m.topk_group = m.expert_groups;
  }
  if (m.topk_group > m.expert_groups) {
    t.fail("topk_group",
           "must be <= expert_groups (" + std::to_string(m.expert_groups) + "), got " + std::to_string(m.topk_group));
  }
  if (m.topk_group * (m.routed_experts / m.expert_groups) < m.top_k) {
    t.fail("topk_group",
           "leaves fewer experts than top_k in a token's groups: topk_group x experts per group must be "
           ">= top_k (" +
               std::to_string(m.top_k) + ")");
  }
  if (m.attention == AttentionKind::gqa) {
    if (m.num_kv_heads == 0) {
      m.num_kv_heads = m.num_heads;
    }
    if (m.head_dim == 0) {
      m.head_dim = m.hidden_size / m.num_heads;
    }
    if (m.num_heads % m.num_kv_heads != 0) {
      t.fail("num_kv_heads", "must divide num_heads (" + std::to_string(m.num_heads) + ")");
    }
  } else if (m.kv_lora_rank == 0 || m.qk_rope_head_dim == 0 || m.qk_nope_head_dim == 0 || m.v_head_dim == 0) {
    t.fail("kv_lora_rank", "MLA needs kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim and v_head_dim > 0");
  }
  check_layer_mechanisms(t, m);
  t.finish();
  return m;
}

ModelSpec load_model_preset(const std::string& name) {
  if (const std::string unknown = model_presets().unknown_message(name); !unknown.empty()) {
    throw core::Error(unknown);
  }
  core::ParamTable t({core::ParamLayer{&model_presets().get(name, "", ""), model_presets().label(name)}}, "model");
  return parse_model_spec(t);
}

const core::PresetCatalog& model_presets() {
  static const core::PresetCatalog catalog("models", embedded_models());
  return catalog;
}

ModelSpec parse_model_section(core::ParamTable& root) {
  auto model = root.table("model", "model architecture: a preset and field overrides");
  const std::string preset = model.string("preset", "", "model preset name (epsim list models)");
  const std::string hf_config = model.string(
      "hf_config", "",
      "a Hugging Face config.json (path relative to the working directory) read as the model's keys, under "
      "the others (docs/model.md; epsim list models --from-hf FILE shows them); not with preset");
  const std::vector<std::string> hf_ignore = model.string_list(
      "hf_ignore", "hf_config: JSON paths of unknown config.json fields accepted as not changing the cost");
  if (!preset.empty()) {
    if (!hf_config.empty()) {
      model.fail("hf_config", "give either preset or hf_config, not both");
    }
    model.add_layer(core::preset_layer(model, "preset", model_presets(), preset));
  }
  HfModelTable derived;  // the layer below the overrides: outlives the reading of the section
  if (!hf_config.empty()) {
    try {
      derived = read_hf_config(hf_config, hf_ignore);
    } catch (const core::Error& e) {
      model.fail("hf_config", e.what());
    }
    model.add_layer(core::ParamLayer{&derived.model, hf_config});
  } else if (!hf_ignore.empty()) {
    model.fail("hf_ignore", "goes with hf_config");
  }
  return parse_model_spec(model);
}

}  // namespace epsim::models
