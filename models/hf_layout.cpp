// SPDX-License-Identifier: Apache-2.0
#include "models/hf_layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

namespace epsim::models {

void HfOut::put(std::string_view key, std::int64_t value) {
  table.insert_or_assign(key, value);
  order.emplace_back(key);
}
void HfOut::put(std::string_view key, bool value) {
  table.insert_or_assign(key, value);
  order.emplace_back(key);
}
void HfOut::put(std::string_view key, std::string_view value) {
  table.insert_or_assign(key, std::string(value));
  order.emplace_back(key);
}
void HfOut::put(std::string_view key, const std::vector<std::string>& values) {
  toml::array a;
  for (const std::string& v : values) {
    a.push_back(v);
  }
  table.insert_or_assign(key, std::move(a));
  order.emplace_back(key);
}

namespace {

// epsim's rule (ModelSpec::is_moe_layer): after `first` dense layers, every step-th layer is MoE.
bool epsim_moe(std::int64_t layer, std::int64_t first, std::int64_t step) {
  return layer >= first && (layer - first) % step == step - 1;
}

}  // namespace

void put_moe_layout(HfOut& out, const HfFields& f, std::string_view field, const std::vector<bool>& moe,
                    std::int64_t dense_intermediate_size) {
  const auto layers = static_cast<std::int64_t>(moe.size());
  const auto first_moe = std::find(moe.begin(), moe.end(), true);
  if (first_moe == moe.end()) {
    f.fail(field, "leaves no MoE layer: epsim simulates MoE models");
  }
  // The step is the distance between the first two MoE layers (1 when there is one): the first dense
  // layers are those before the first MoE layer less the step's own leading dense layers.
  const std::int64_t first_index = first_moe - moe.begin();
  const auto second = std::find(first_moe + 1, moe.end(), true);
  const std::int64_t step = second == moe.end() ? 1 : second - first_moe;
  const std::int64_t first_dense = first_index - (step - 1);
  bool fits = first_dense >= 0 && step <= 64;
  for (std::int64_t i = 0; fits && i < layers; ++i) {
    fits = epsim_moe(i, first_dense, step) == moe[static_cast<std::size_t>(i)];
  }
  if (!fits) {
    std::string pattern;
    for (const bool m : moe) {
      pattern += m ? 'M' : 'D';
    }
    f.fail(field, fmt::format("gives a dense/MoE layer pattern ({}) that first_dense_layers and moe_layer_step "
                              "cannot describe",
                              pattern));
  }
  if (first_dense > 0) {
    out.put("first_dense_layers", first_dense);
  }
  if (first_dense > 0 || step > 1) {
    out.put("dense_intermediate_size", dense_intermediate_size);
  }
  if (step > 1) {
    out.put("moe_layer_step", step);
  }
}

void put_attention_layout(HfOut& out, const std::vector<HfAttention>& layers, std::int64_t chunk_size) {
  const auto n = static_cast<std::int64_t>(layers.size());
  if (std::all_of(layers.begin(), layers.end(), [](HfAttention a) { return a == HfAttention::full; })) {
    return;
  }
  const bool only_chunked_or_full = std::all_of(
      layers.begin(), layers.end(), [](HfAttention a) { return a == HfAttention::full || a == HfAttention::chunked; });
  if (only_chunked_or_full) {
    // ModelSpec::is_chunked_attention_layer: every layer chunked except each every-th (0: none).
    for (std::int64_t every = 0; every <= n; every = every == 0 ? 2 : every + 1) {
      bool fits = true;
      for (std::int64_t i = 0; fits && i < n; ++i) {
        const bool chunked = every == 0 || (i + 1) % every != 0;
        fits = chunked == (layers[static_cast<std::size_t>(i)] == HfAttention::chunked);
      }
      if (fits) {
        out.put("attention_chunk_size", chunk_size);
        if (every > 0) {
          out.put("full_attention_every", every);
        }
        return;
      }
    }
    out.put("attention_chunk_size", chunk_size);
  }
  std::vector<std::string> names;
  names.reserve(layers.size());
  for (const HfAttention a : layers) {
    switch (a) {
      case HfAttention::full:
        names.emplace_back("full");
        break;
      case HfAttention::sliding:
        names.emplace_back("sliding");
        break;
      case HfAttention::chunked:
        names.emplace_back("chunked");
        break;
      case HfAttention::linear:
        names.emplace_back("linear");
        break;
    }
  }
  out.put("layer_types", names);
}

namespace {

// A module list that keeps the attention projections out of the quantisation (gpt-oss's
// "model.layers.*.self_attn", compressed-tensors' "re:.*self_attn.*").
bool excludes_attention(const std::vector<std::string>& modules) {
  return std::any_of(modules.begin(), modules.end(),
                     [](const std::string& m) { return m.find("self_attn") != std::string::npos; });
}

// compressed-tensors as Kimi K2 Thinking / K2.5 ship it: one group of INT4 weights (symmetric, one scale
// per 32, no activation quantisation: W4A16) on the routed experts, attention and shared experts and the
// dense MLPs in its ignore list kept BF16. Anything else is refused naming the field.
std::string compressed_int4(HfOut& out, HfFields& q) {
  const nlohmann::json* groups = q.object("config_groups");
  if (groups == nullptr || !groups->is_object() || groups->size() != 1) {
    q.fail("config_groups", "expected exactly one quantisation group (INT4 routed-expert weights)");
  }
  const std::string name = groups->begin().key();
  HfFields g(groups->begin().value(), q.file(), q.path("config_groups") + "." + name + ".");
  const nlohmann::json* w = g.object("weights");
  if (w == nullptr) {
    g.fail("weights", "missing; expected the group's weight scheme");
  }
  HfFields wf(*w, q.file(), g.path("weights") + ".");
  if (wf.integer("num_bits") != 4 || wf.optional_string("type").value_or("") != "int") {
    wf.fail("num_bits", "epsim prices group-wise INT4 weights only (num_bits 4, type \"int\")");
  }
  if (wf.optional_string("strategy").value_or("") != "group" || wf.integer("group_size") != 32 ||
      !wf.boolean("symmetric", false)) {
    wf.fail("group_size", "epsim prices symmetric INT4 with one scale per 32 weights (strategy \"group\")");
  }
  wf.ignore({"actorder", "block_structure", "dynamic", "observer", "observer_kwargs"});
  wf.finish(out.accepted, "quantization_config (compressed-tensors weights)", out.ignored);
  if (g.has("input_activations")) {
    g.fail("input_activations", "quantised activations are not priced (W4A16 only)");
  }
  g.ignore({"input_activations", "output_activations", "targets", "format"});
  g.finish(out.accepted, "quantization_config (compressed-tensors group)", out.ignored);
  const std::vector<std::string> kept = q.string_list("ignore");
  if (!excludes_attention(kept)) {
    q.fail("ignore", "expected the attention projections kept unquantised (\"re:.*self_attn.*\")");
  }
  if (q.has("kv_cache_scheme")) {
    q.fail("kv_cache_scheme", "a quantised KV cache from compressed-tensors is not read");
  }
  q.ignore({"kv_cache_scheme", "format", "quantization_status", "global_compression_ratio", "sparsity_config"});
  return "int4";
}

}  // namespace

void put_weight_formats(HfOut& out, HfFields& f) {
  const nlohmann::json* q = f.object("quantization_config");
  std::string weight = "bf16";
  std::string expert;
  std::string kv_cache;
  if (q != nullptr) {
    HfFields qf(*q, f.file(), f.path("quantization_config") + ".");
    const std::string method = qf.optional_string("quant_method").value_or("");
    if (method.empty()) {
      qf.fail("quant_method", "missing; expected the quantisation method (fp8, mxfp4 or modelopt)");
    }
    if (method == "fp8") {
      // DeepSeek's 128 x 128 block scales are 1/16384 of the weights: priced as plain FP8.
      const std::optional<std::string> fmt_name = qf.optional_string("fmt");
      if (fmt_name && *fmt_name != "e4m3" && *fmt_name != "float8_e4m3fn") {
        qf.fail("fmt", fmt::format("expected an FP8 e4m3 format (e4m3, float8_e4m3fn), got \"{}\"", *fmt_name));
      }
      qf.ignore({"activation_scheme", "weight_block_size", "scale_fmt", "modules_to_not_convert", "ignored_layers"});
      weight = "fp8";
    } else if (method == "mxfp4") {
      // gpt-oss: the experts are MXFP4; modules_to_not_convert keeps attention, router, embeddings
      // and LM head in BF16.
      expert = "mxfp4";
      weight = excludes_attention(qf.string_list("modules_to_not_convert")) ? "bf16" : "mxfp4";
    } else if (method == "modelopt") {
      const std::optional<std::string> algo = qf.optional_string("quant_algo");
      std::vector<std::string> excluded = qf.string_list("ignore");
      const std::vector<std::string> more = qf.string_list("exclude_modules");
      excluded.insert(excluded.end(), more.begin(), more.end());
      if (algo == "NVFP4") {
        expert = "nvfp4";
        weight = excludes_attention(excluded) ? "bf16" : "nvfp4";
      } else if (algo == "FP8") {
        weight = "fp8";
      } else {
        qf.fail("quant_algo", fmt::format("expected NVFP4 or FP8, got \"{}\"", algo.value_or("")));
      }
      const std::optional<std::string> kv = qf.optional_string("kv_cache_quant_algo");
      if (kv == "FP8") {
        kv_cache = "fp8";
      } else if (kv) {
        qf.fail("kv_cache_quant_algo", fmt::format("expected FP8 or null, got \"{}\"", *kv));
      }
      qf.ignore({"producer", "group_size", "config_groups", "quantization_status"});
    } else if (method == "compressed-tensors") {
      expert = compressed_int4(out, qf);
      weight = "bf16";
    } else {
      qf.fail("quant_method", fmt::format("epsim prices BF16, FP8 (quant_method fp8), MXFP4 (mxfp4), NVFP4 "
                                          "(modelopt) and group-wise INT4 (compressed-tensors) weights; \"{}\" is "
                                          "none of them",
                                          method));
    }
    qf.finish(out.accepted, fmt::format("quantization_config ({})", method), out.ignored);
  }
  out.put("weight_dtype", weight);
  if (!expert.empty() && expert != weight) {
    out.put("expert_weight_dtype", expert);
  }
  if (!kv_cache.empty()) {
    out.put("kv_cache_dtype", kv_cache);
  }
}

void put_gqa(HfOut& out, HfFields& f, std::int64_t hidden_size, std::string_view head_dim_field) {
  const std::int64_t heads = f.integer("num_attention_heads");
  const std::int64_t kv_heads = f.optional_integer("num_key_value_heads", 1).value_or(heads);
  const std::int64_t head_dim = f.optional_integer(head_dim_field, 1).value_or(hidden_size / heads);
  out.put("attention", std::string_view("gqa"));
  out.put("num_heads", heads);
  out.put("num_kv_heads", kv_heads);
  out.put("head_dim", head_dim);
}

void ignore_common_fields(HfFields& f) {
  f.ignore({"architectures", "model_type", "auto_map", "transformers_version", "torch_dtype", "dtype", "_name_or_path",
            "bos_token_id", "eos_token_id", "pad_token_id", "sep_token_id", "initializer_range", "rms_norm_eps",
            "layer_norm_eps", "rope_theta", "rope_scaling", "rope_parameters", "max_position_embeddings", "use_cache",
            "attention_dropout", "hidden_act", "output_router_logits", "router_aux_loss_coef", "aux_loss_alpha",
            "seq_aux", "pretraining_tp", "use_bfloat16", "_attn_implementation_autoset",
            // PretrainedConfig's generation and task defaults, written out by some exports (Kimi-K2.5)
            "add_cross_attention", "bad_words_ids", "begin_suppress_tokens", "chunk_size_feed_forward",
            "cross_attention_hidden_size", "decoder_start_token_id", "diversity_penalty", "do_sample", "early_stopping",
            "encoder_no_repeat_ngram_size", "exponential_decay_length_penalty", "finetuning_task",
            "forced_bos_token_id", "forced_eos_token_id", "id2label", "is_decoder", "is_encoder_decoder", "label2id",
            "length_penalty", "max_length", "min_length", "no_repeat_ngram_size", "num_beam_groups", "num_beams",
            "num_return_sequences", "output_attentions", "output_hidden_states", "output_scores", "prefix",
            "problem_type", "pruned_heads", "remove_invalid_values", "repetition_penalty", "return_dict",
            "return_dict_in_generate", "suppress_tokens", "task_specific_params", "temperature", "tf_legacy_loss",
            "tie_encoder_decoder", "tokenizer_class", "top_k", "top_p", "torchscript", "typical_p"});
}

}  // namespace epsim::models
