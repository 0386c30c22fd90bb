// SPDX-License-Identifier: Apache-2.0
// Hugging Face config.json files read into [model] tables: the shipped configs (the model authors'
// files, tests/data/hf_configs/) against the presets derived from them and against hand-written tables
// of the published numbers, the round trip through parse_model_spec, and every refusal.
#include <catch2/catch.hpp>

#include <toml++/toml.h>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "core/params.hpp"
#include "models/hf_config.hpp"
#include "models/model_spec.hpp"

using namespace epsim;
using Catch::Matchers::Contains;

namespace {

const std::filesystem::path k_dir = std::filesystem::path(EPSIM_TEST_DATA_DIR) / "hf_configs";

std::string path_of(const std::string& stem) {
  return (k_dir / (stem + ".json")).string();
}

std::string read_text(const std::string& stem) {
  std::ifstream in(path_of(stem), std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The table less its name, for comparisons (the name is the file's, or the preset's display name).
toml::table without_name(toml::table t) {
  t.erase("name");
  return t;
}

std::string show(const toml::table& t) {
  std::ostringstream s;
  s << t;
  return s.str();
}

// The message of the core::Error `f` throws ("" when it does not).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const core::Error& e) {
    return e.what();
  }
  return "";
}

std::string derive_error(const std::string& text, const std::vector<std::string>& accepted = {}) {
  return error_of([&] { (void)models::derive_hf_model(text, "cfg.json", "m", accepted); });
}

// Shipped configs with the preset derived from each (tests/data/hf_configs/NAME.json, presets/NAME.toml).
const std::vector<std::string> k_with_presets{
    "deepseek-v3",  "deepseek-v3.2", "kimi-k2",       "llama-4-scout-17b-16e", "llama-4-maverick-17b-128e",
    "mixtral-8x7b", "mixtral-8x22b", "qwen3-30b-a3b", "qwen3-235b-a22b",       "qwen3-next-80b-a3b",
    "gpt-oss-120b", "gpt-oss-20b",   "kimi-k2.5"};

}  // namespace

TEST_CASE("each shipped config.json gives its preset, key by key") {
  for (const std::string& name : k_with_presets) {
    INFO(name);
    const models::HfModelTable derived = models::read_hf_config(path_of(name));
    const toml::table& preset = models::model_presets().get(name, "", "");
    INFO("derived:\n" << show(derived.model) << "\npreset:\n" << show(preset));
    CHECK(without_name(derived.model) == without_name(preset));
    CHECK(derived.model["name"].value_or(std::string()) == name);
  }
}

TEST_CASE("DeepSeek-V3's config.json reads as its published architecture") {
  // deepseek-ai/DeepSeek-V3 (technical report, table of hyper-parameters): 61 layers, the first 3 dense
  // (FFN 18432), 256 routed experts of 2048 + 1 shared, top-8 from at most 4 of 8 groups, MLA with 128
  // heads, q rank 1536, kv rank 512, 128 + 64 QK and 128 V head dims, FP8 weights, 129280 tokens.
  const models::HfModelTable t = models::read_hf_config(path_of("deepseek-v3"));
  const toml::table expected{{"hidden_size", 7168},
                             {"num_layers", 61},
                             {"first_dense_layers", 3},
                             {"dense_intermediate_size", 18432},
                             {"moe_intermediate_size", 2048},
                             {"routed_experts", 256},
                             {"shared_experts", 1},
                             {"top_k", 8},
                             {"expert_groups", 8},
                             {"topk_group", 4},
                             {"attention", "mla"},
                             {"num_heads", 128},
                             {"q_lora_rank", 1536},
                             {"kv_lora_rank", 512},
                             {"qk_nope_head_dim", 128},
                             {"qk_rope_head_dim", 64},
                             {"v_head_dim", 128},
                             {"vocab_size", 129280},
                             {"weight_dtype", "fp8"}};
  INFO(show(t.model));
  CHECK(without_name(t.model) == expected);
  CHECK(t.family == "DeepseekV3ForCausalLM");
  // What it ignored is listed, by JSON path: RoPE scaling, the routing arithmetic, the MTP layer, the
  // quantisation's block size.
  for (const char* f : {"rope_scaling", "scoring_func", "routed_scaling_factor", "num_nextn_predict_layers",
                        "quantization_config.weight_block_size", "torch_dtype", "transformers_version"}) {
    INFO(f);
    CHECK(std::find(t.ignored.begin(), t.ignored.end(), f) != t.ignored.end());
  }
}

TEST_CASE("gpt-oss-120b's config.json reads as its published architecture") {
  // openai/gpt-oss-120b (model card): 36 layers alternating 128-token banded (sliding) and dense
  // attention, starting with a banded one; 128 experts of 2880, top-4, no shared expert; 64 query and 8
  // KV heads of 64; learned attention sinks; MXFP4 experts, the rest BF16; vocabulary 201088.
  const models::HfModelTable t = models::read_hf_config(path_of("gpt-oss-120b"));
  std::vector<std::string> layers;
  for (int i = 0; i < 36; ++i) {
    layers.emplace_back(i % 2 == 0 ? "sliding" : "full");
  }
  toml::array layer_types;
  for (const std::string& l : layers) {
    layer_types.push_back(l);
  }
  const toml::table expected{{"hidden_size", 2880},
                             {"num_layers", 36},
                             {"moe_intermediate_size", 2880},
                             {"routed_experts", 128},
                             {"top_k", 4},
                             {"attention", "gqa"},
                             {"num_heads", 64},
                             {"num_kv_heads", 8},
                             {"head_dim", 64},
                             {"layer_types", layer_types},
                             {"sliding_window", 128},
                             {"attention_sinks", true},
                             {"vocab_size", 201088},
                             {"weight_dtype", "bf16"},
                             {"expert_weight_dtype", "mxfp4"}};
  INFO(show(t.model));
  CHECK(without_name(t.model) == expected);
}

TEST_CASE("Qwen3-Next's config.json reads as its published architecture") {
  // Qwen/Qwen3-Next-80B-A3B (model card): 48 layers as 12 x (3 Gated DeltaNet + 1 gated attention); 512
  // experts of 512, top-10, one shared expert of 512; gated attention with 16 Q and 2 KV heads of 256;
  // Gated DeltaNet with 16 QK and 32 V heads of 128 (short convolution of 4).
  const models::HfModelTable t = models::read_hf_config(path_of("qwen3-next-80b-a3b"));
  toml::array layer_types;
  for (int i = 0; i < 48; ++i) {
    layer_types.push_back(std::string((i + 1) % 4 == 0 ? "full" : "linear"));
  }
  const toml::table expected{{"hidden_size", 2048},
                             {"num_layers", 48},
                             {"moe_intermediate_size", 512},
                             {"routed_experts", 512},
                             {"shared_experts", 1},
                             {"top_k", 10},
                             {"attention", "gqa"},
                             {"num_heads", 16},
                             {"num_kv_heads", 2},
                             {"head_dim", 256},
                             {"attention_output_gate", true},
                             {"layer_types", layer_types},
                             {"linear_attention", "gated_deltanet"},
                             {"linear_num_key_heads", 16},
                             {"linear_num_value_heads", 32},
                             {"linear_key_head_dim", 128},
                             {"linear_value_head_dim", 128},
                             {"linear_conv_kernel_dim", 4},
                             {"vocab_size", 151936},
                             {"weight_dtype", "bf16"}};
  INFO(show(t.model));
  CHECK(without_name(t.model) == expected);
}

TEST_CASE("Llama-4 Maverick interleaves dense and MoE layers, read from text_config") {
  // meta-llama/Llama-4-Maverick-17B-128E: interleave_moe_layer_step 2 -> layers 1, 3, ..., 47 MoE, the
  // others dense of intermediate_size_mlp 16384; chunked attention (8192) except every 4th (NoPE) layer.
  const models::HfModelTable t = models::read_hf_config(path_of("llama-4-maverick-17b-128e"));
  CHECK(t.model["moe_layer_step"].value_or(0) == 2);
  CHECK(!t.model.contains("first_dense_layers"));
  CHECK(t.model["dense_intermediate_size"].value_or(0) == 16384);
  CHECK(t.model["routed_experts"].value_or(0) == 128);
  CHECK(t.model["attention_chunk_size"].value_or(0) == 8192);
  CHECK(t.model["full_attention_every"].value_or(0) == 4);
  CHECK(t.family == "Llama4ForConditionalGeneration");
  CHECK(std::find(t.ignored.begin(), t.ignored.end(), "text_config.rope_theta") != t.ignored.end());
}

TEST_CASE("every shipped config's table parses as a [model] section") {
  for (const auto& entry : std::filesystem::directory_iterator(k_dir)) {
    const std::string stem = entry.path().stem().string();
    INFO(stem);
    const models::HfModelTable t = models::read_hf_config(entry.path().string());
    core::ParamTable p({core::ParamLayer{&t.model, entry.path().string()}}, "model");
    const models::ModelSpec m = models::parse_model_spec(p);
    CHECK(m.hidden_size == t.model["hidden_size"].value_or(0));
    CHECK(m.num_layers == t.model["num_layers"].value_or(0));
    CHECK(m.routed_experts == t.model["routed_experts"].value_or(0));
    // The printed TOML reads back as the same table.
    const toml::table reread = toml::parse(models::hf_model_toml(t));
    CHECK(*reread["model"].as_table() == t.model);
  }
}

TEST_CASE("Kimi-K2.5's INT4 experts are read, other compressed-tensors schemes refused naming the field") {
  // compressed-tensors, one group: 4-bit symmetric integers, one scale per 32, no activation scheme
  // (W4A16) on the routed experts; attention, shared expert and dense MLP in its ignore list.
  const models::HfModelTable t = models::read_hf_config(path_of("kimi-k2.5"));
  CHECK(t.model["weight_dtype"].value_or(std::string()) == "bf16");
  CHECK(t.model["expert_weight_dtype"].value_or(std::string()) == "int4");
  CHECK(t.model["routed_experts"].value_or(0) == 384);
  core::ParamTable p({core::ParamLayer{&t.model, "kimi-k2.5.json"}}, "model");
  const models::ModelSpec m = models::parse_model_spec(p);
  CHECK(m.expert_bytes() == 0.5625);  // 4 bits + a 16-bit scale per 32 weights
  CHECK(m.expert_precision() == hardware::Precision::bf16);

  const auto compressed = [](const std::string& weights, const std::string& group_extra = "") {
    return R"({"architectures": ["DeepseekV3ForCausalLM"], "hidden_size": 64, "num_hidden_layers": 2,
      "intermediate_size": 128, "moe_intermediate_size": 32, "n_routed_experts": 8, "num_experts_per_tok": 2,
      "num_attention_heads": 4, "kv_lora_rank": 16, "qk_nope_head_dim": 8, "qk_rope_head_dim": 8,
      "v_head_dim": 8, "vocab_size": 100,
      "quantization_config": {"quant_method": "compressed-tensors", "ignore": ["re:.*self_attn.*"],
        "config_groups": {"group_0": {"targets": ["Linear"], "weights": )" +
           weights + group_extra + "}}}}";
  };
  const std::string int8 = R"({"num_bits": 8, "type": "int", "strategy": "group", "group_size": 32,
      "symmetric": true})";
  CHECK_THAT(derive_error(compressed(int8)),
             Contains("cfg.json: quantization_config.config_groups.group_0.weights.num_bits: epsim prices "
                      "group-wise INT4 weights only"));
  const std::string g128 = R"({"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128,
      "symmetric": true})";
  CHECK_THAT(derive_error(compressed(g128)), Contains("weights.group_size: epsim prices symmetric INT4"));
  const std::string w4 = R"({"num_bits": 4, "type": "int", "strategy": "group", "group_size": 32,
      "symmetric": true})";
  CHECK_THAT(derive_error(compressed(w4, R"(, "input_activations": {"num_bits": 8})")),
             Contains("group_0.input_activations: quantised activations are not priced"));
}

TEST_CASE("an unknown architecture is refused, listing those read") {
  const std::string e = derive_error(R"({"architectures": ["BertForMaskedLM"], "hidden_size": 768})");
  CHECK_THAT(e, Contains("cfg.json: architectures: unknown architecture \"BertForMaskedLM\"; epsim reads"));
  CHECK_THAT(e, Contains("DeepseekV3ForCausalLM"));
  CHECK_THAT(e, Contains("GptOssForCausalLM"));
  CHECK_THAT(derive_error(R"({"hidden_size": 768})"), Contains("cfg.json: architectures: missing"));
}

TEST_CASE("an unknown field is refused unless hf_ignore accepts it") {
  std::string text = read_text("mixtral-8x7b");
  text.insert(text.find('{') + 1, "\"num_sparse_tokens\": 3,");
  const std::string e = derive_error(text);
  CHECK(e ==
        "cfg.json: num_sparse_tokens: unknown field of a MixtralForCausalLM config: epsim cannot tell whether it "
        "changes the cost; if it does not, accept it with [model] hf_ignore = [\"num_sparse_tokens\"]");
  const models::HfModelTable t =
      models::derive_hf_model(text, "cfg.json", "m", std::vector<std::string>{"num_sparse_tokens"});
  CHECK(std::find(t.ignored.begin(), t.ignored.end(), "num_sparse_tokens") != t.ignored.end());
  // A nested field is named by its JSON path.
  std::string llama = read_text("llama-4-scout-17b-16e");
  llama.insert(llama.find("\"attention_bias\""), "\"kv_sharing\": true, ");
  CHECK_THAT(derive_error(llama), Contains("cfg.json: text_config.kv_sharing: unknown field"));
  CHECK_NOTHROW(models::derive_hf_model(llama, "cfg.json", "m", std::vector<std::string>{"text_config.kv_sharing"}));
}

TEST_CASE("a truncated or malformed config.json names the file and the position") {
  const std::string text = read_text("deepseek-v3");
  const std::string e = derive_error(text.substr(0, text.rfind('\n', text.size() / 2)));
  CHECK_THAT(e, Contains("cfg.json: invalid JSON at byte "));
  CHECK_THAT(e, Contains("unexpected end of input"));
  CHECK(e.find('\n') == std::string::npos);
  CHECK_THAT(derive_error("[1, 2]"), Contains("cfg.json: expected a JSON object"));
  CHECK_THAT(derive_error("{\"a\": tru}"),
             Contains("cfg.json: invalid JSON at byte 10: parse error at line 1, column 10"));
  const std::string cut = derive_error(text.substr(0, text.find("\"num_hidden_layers\"") + 10));
  CHECK_THAT(cut, Contains("cfg.json: invalid JSON at byte "));
  CHECK_THAT(cut, Contains("missing closing quote"));
  // Valid syntax past double's range is nlohmann's out_of_range, not a parse error: still a clear error.
  CHECK(derive_error("{\"hidden_size\": 1e400}") == "cfg.json: invalid JSON: number overflow parsing '1e400'");
}

TEST_CASE("a wrong type or a missing required field names the field") {
  std::string text = read_text("qwen3-30b-a3b");
  const std::string hidden = "\"hidden_size\": 2048";
  REQUIRE(text.find(hidden) != std::string::npos);
  std::string as_string = text;
  as_string.replace(as_string.find(hidden), hidden.size(), "\"hidden_size\": \"2048\"");
  CHECK(derive_error(as_string) == "cfg.json: hidden_size: expected an integer, got string \"2048\"");
  std::string as_real = text;
  as_real.replace(as_real.find(hidden), hidden.size(), "\"hidden_size\": 2048.5");
  CHECK(derive_error(as_real) == "cfg.json: hidden_size: expected an integer, got number 2048.5");
  std::string negative = text;
  negative.replace(negative.find(hidden), hidden.size(), "\"hidden_size\": -1");
  CHECK(derive_error(negative) == "cfg.json: hidden_size: expected an integer in [1, 2147483648], got -1");
  std::string layers = text;
  layers.replace(layers.find("\"num_hidden_layers\": 48"), 23, "\"num_hidden_layers\": 100000");
  CHECK(derive_error(layers) == "cfg.json: num_hidden_layers: expected an integer in [1, 1000], got 100000");
  std::string missing = text;
  missing.replace(missing.find(hidden), hidden.size() + 1, "");
  CHECK(derive_error(missing) == "cfg.json: hidden_size: missing; expected an integer");
  std::string deep = read_text("deepseek-v3");
  deep.replace(deep.find("\"quant_method\": \"fp8\""), 21, "\"quant_method\": 8");
  CHECK(derive_error(deep) == "cfg.json: quantization_config.quant_method: expected a string, got number 8");
}

TEST_CASE("too deep or too large input is refused before parsing") {
  const std::string deep = "{\"architectures\": " + std::string(300, '[') + std::string(300, ']') + "}";
  CHECK_THAT(derive_error(deep), Contains("cfg.json: line 1: JSON nests deeper than 256 levels"));
  const std::string big(models::k_max_hf_config_bytes + 1, ' ');
  CHECK_THAT(derive_error(big), Contains("cfg.json: 4194305 bytes; a config.json is at most 4194304 bytes"));
  const std::filesystem::path file = std::filesystem::temp_directory_path() / "epsim_hf_big_config.json";
  {
    std::ofstream out(file, std::ios::binary);
    out << big;
  }
  CHECK_THAT(error_of([&] { (void)models::read_hf_config(file.string()); }), Contains("larger than 4194304 bytes"));
  std::filesystem::remove(file);
}

TEST_CASE("layouts epsim cannot express are refused naming the field") {
  // Qwen: dense layers 0 and 5 of 8 is no first_dense_layers + moe_layer_step pattern.
  std::string text = read_text("qwen3-30b-a3b");
  text.replace(text.find("\"mlp_only_layers\": []"), 21, "\"mlp_only_layers\": [0, 5]");
  CHECK_THAT(derive_error(text), Contains("cfg.json: mlp_only_layers: gives a dense/MoE layer pattern (DMMMMDMM"));
  // mlp_only_layers = [0, 1] is two leading dense layers.
  std::string lead = read_text("qwen3-30b-a3b");
  lead.replace(lead.find("\"mlp_only_layers\": []"), 21, "\"mlp_only_layers\": [0, 1]");
  const models::HfModelTable t = models::derive_hf_model(lead, "cfg.json", "m");
  CHECK(t.model["first_dense_layers"].value_or(0) == 2);
  CHECK(t.model["dense_intermediate_size"].value_or(0) == 6144);
  // DeepSeek's moe_layer_freq 2 after 3 dense layers: MoE on the even layers from 4, i.e. epsim's 3
  // dense layers then every 2nd layer MoE.
  std::string ds = read_text("deepseek-v3");
  ds.replace(ds.find("\"moe_layer_freq\": 1"), 19, "\"moe_layer_freq\": 2");
  const models::HfModelTable every2 = models::derive_hf_model(ds, "cfg.json", "m");
  CHECK(every2.model["first_dense_layers"].value_or(0) == 3);
  CHECK(every2.model["moe_layer_step"].value_or(0) == 2);
  // With no dense layer first, layer 0 is MoE and layer 1 dense: no epsim layout starts so.
  ds.replace(ds.find("\"first_k_dense_replace\": 3"), 26, "\"first_k_dense_replace\": 0");
  CHECK_THAT(derive_error(ds), Contains("cfg.json: moe_layer_freq: gives a dense/MoE layer pattern (MDMDM"));
  // A MiniMax attention type other than 0 and 1.
  const std::string mm =
      R"({"architectures": ["MiniMaxM2ForCausalLM"], "hidden_size": 64, "num_hidden_layers": 2,
          "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 32,
          "num_local_experts": 4, "num_experts_per_tok": 2, "vocab_size": 100, "attn_type_list": [1, 2]})";
  CHECK(derive_error(mm) ==
        "cfg.json: attn_type_list: entry 1 is 2; expected 0 (lightning attention) or 1 (softmax attention)");
}

TEST_CASE("MiniMax's lightning attention layers read as linear layers") {
  // The mapping rule (transformers' MiniMax: attn_type_list 0 = lightning linear attention, one K and
  // one V head per query head of head_dim, no convolution) on a small hand-made config.
  const std::string mm =
      R"({"architectures": ["MiniMaxText01ForCausalLM"], "hidden_size": 64, "num_hidden_layers": 4,
          "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 32,
          "num_local_experts": 4, "num_experts_per_tok": 2, "vocab_size": 100, "attn_type_list": [0, 0, 0, 1],
          "shared_intermediate_size": 0, "postnorm": true, "block_size": 256})";
  const models::HfModelTable t = models::derive_hf_model(mm, "cfg.json", "m");
  toml::array types;
  for (const char* s : {"linear", "linear", "linear", "full"}) {
    types.push_back(std::string(s));
  }
  CHECK(*t.model["layer_types"].as_array() == types);
  CHECK(t.model["linear_attention"].value_or(std::string()) == "lightning");
  CHECK(t.model["linear_num_key_heads"].value_or(0) == 4);
  CHECK(t.model["linear_num_value_heads"].value_or(0) == 4);
  CHECK(t.model["linear_key_head_dim"].value_or(0) == 16);
  CHECK(t.model["linear_conv_kernel_dim"].value_or(-1) == 0);
}

TEST_CASE("Hunyuan's per-layer lists must hold one value, and cross-layer KV sharing is refused") {
  // The mapping rule on a small hand-made config in the remote-code form (per-layer lists):
  // use_mixed_mlp_moe adds num_shared_expert shared MLPs of intermediate_size each.
  const std::string base =
      R"({"architectures": ["HunYuanMoEV1ForCausalLM"], "hidden_size": 64, "num_hidden_layers": 3,
          "num_attention_heads": 4, "num_key_value_heads": 2, "attention_head_dim": 16, "head_dim": 16,
          "intermediate_size": 48, "moe_intermediate_size": [32, 32, 32], "num_experts": 8,
          "moe_topk": [2, 2, 2], "use_mixed_mlp_moe": true, "num_shared_expert": [1, 1, 1],
          "use_cla": false, "cla_share_factor": 2, "vocab_size": 100, "tie_word_embeddings": true})";
  const models::HfModelTable t = models::derive_hf_model(base, "cfg.json", "m");
  const toml::table expected{{"hidden_size", 64},
                             {"num_layers", 3},
                             {"moe_intermediate_size", 32},
                             {"routed_experts", 8},
                             {"shared_experts", 1},
                             {"shared_intermediate_size", 48},
                             {"top_k", 2},
                             {"attention", "gqa"},
                             {"num_heads", 4},
                             {"num_kv_heads", 2},
                             {"head_dim", 16},
                             {"vocab_size", 100},
                             {"tie_word_embeddings", true},
                             {"weight_dtype", "bf16"}};
  INFO(show(t.model));
  CHECK(without_name(t.model) == expected);
  std::string uneven = base;
  uneven.replace(uneven.find("[2, 2, 2]"), 9, "[2, 4, 2]");
  CHECK(derive_error(uneven) ==
        "cfg.json: moe_topk: differs between layers (2 and 4): epsim gives every MoE layer the same shape");
  std::string cla = base;
  cla.replace(cla.find("\"use_cla\": false"), 16, "\"use_cla\": true");
  CHECK(derive_error(cla) == "cfg.json: use_cla: cross-layer KV sharing (CLA) is not one epsim prices; expected false");
}

TEST_CASE("[model] hf_config is a layer under the section's own keys") {
  const std::string file = path_of("qwen3-30b-a3b");
  auto section = [&](toml::table model) {
    toml::table root{{"model", std::move(model)}};
    core::ParamTable t({core::ParamLayer{&root, "exp.toml"}}, "");
    return models::parse_model_section(t);
  };
  const models::ModelSpec m = section(toml::table{{"hf_config", file}});
  CHECK(m.name == "qwen3-30b-a3b");
  CHECK(m.hidden_size == 2048);
  CHECK(m.routed_experts == 128);
  CHECK(m.top_k == 8);
  // A key of the section overrides the derived one, as over a preset.
  const models::ModelSpec over = section(toml::table{{"hf_config", file}, {"top_k", 4}, {"name", "mine"}});
  CHECK(over.top_k == 4);
  CHECK(over.name == "mine");
  CHECK(over.routed_experts == 128);
  // Errors name the config file, the key and, inside, the config.json and its field.
  CHECK(error_of([&] {
          (void)section(toml::table{{"hf_config", file}, {"preset", "qwen3-30b-a3b"}});
        }) == "exp.toml: model.hf_config: give either preset or hf_config, not both");
  CHECK(error_of([&] {
          (void)section(toml::table{{"hf_ignore", toml::array{"x"}}, {"preset", "qwen3-30b-a3b"}});
        }) == "exp.toml: model.hf_ignore: goes with hf_config");
  const std::filesystem::path extra = std::filesystem::temp_directory_path() / "epsim_hf_extra_config.json";
  {
    std::string text = read_text("qwen3-30b-a3b");
    text.insert(text.find('{') + 1, "\"dual_chunk_attention\": true,");
    std::ofstream out(extra, std::ios::binary);
    out << text;
  }
  CHECK(error_of([&] {
          (void)section(toml::table{{"hf_config", extra.string()}});
        }) == "exp.toml: model.hf_config: " + extra.string() +
                  ": dual_chunk_attention: unknown field of a Qwen3MoeForCausalLM config: epsim cannot tell whether it "
                  "changes the cost; if it does not, accept it with [model] hf_ignore = [\"dual_chunk_attention\"]");
  const models::ModelSpec accepted =
      section(toml::table{{"hf_config", extra.string()}, {"hf_ignore", toml::array{"dual_chunk_attention"}}});
  CHECK(accepted.hidden_size == 2048);
  std::filesystem::remove(extra);
}

TEST_CASE("quantization_config's formats map to weight_dtype, expert_weight_dtype and kv_cache_dtype") {
  // Mixtral-8x7B's config with each quantisation block in turn.
  const std::string text = read_text("mixtral-8x7b");
  auto with = [&](const std::string& q) {
    std::string t = text;
    t.insert(t.find('{') + 1, "\"quantization_config\": " + q + ",");
    return t;
  };
  auto dtypes = [&](const std::string& q) {
    const models::HfModelTable t = models::derive_hf_model(with(q), "cfg.json", "m");
    return t.model["weight_dtype"].value_or(std::string()) + "/" +
           t.model["expert_weight_dtype"].value_or(std::string("-")) + "/" +
           t.model["kv_cache_dtype"].value_or(std::string("-"));
  };
  // NVIDIA ModelOpt NVFP4 checkpoints keep attention in BF16 (exclude_modules) and may store FP8 KV.
  CHECK(dtypes(R"({"quant_method": "modelopt", "quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8",
                   "group_size": 16, "exclude_modules": ["lm_head", "model.layers.0.self_attn.q_proj"]})") ==
        "bf16/nvfp4/fp8");
  CHECK(dtypes(R"({"quant_method": "modelopt", "quant_algo": "NVFP4", "exclude_modules": ["lm_head"]})") ==
        "nvfp4/-/-");
  CHECK(dtypes(R"({"quant_method": "modelopt", "quant_algo": "FP8"})") == "fp8/-/-");
  CHECK(dtypes(R"({"quant_method": "mxfp4", "modules_to_not_convert": ["lm_head"]})") == "mxfp4/-/-");
  CHECK(dtypes(R"({"quant_method": "fp8", "fmt": "float8_e4m3fn", "weight_block_size": [128, 128]})") == "fp8/-/-");
  CHECK(derive_error(with(R"({"quant_method": "fp8", "fmt": "e5m2"})")) ==
        "cfg.json: quantization_config.fmt: expected an FP8 e4m3 format (e4m3, float8_e4m3fn), got \"e5m2\"");
  CHECK(derive_error(with(R"({"quant_method": "modelopt", "quant_algo": "W4A8_AWQ"})")) ==
        "cfg.json: quantization_config.quant_algo: expected NVFP4 or FP8, got \"W4A8_AWQ\"");
  CHECK_THAT(derive_error(with(R"({"quant_method": "awq", "bits": 4})")),
             Contains("cfg.json: quantization_config.quant_method: epsim prices BF16, FP8"));
  CHECK_THAT(derive_error(with(R"({"quant_method": "fp8", "lossless": true})")),
             Contains("cfg.json: quantization_config.lossless: unknown field of a quantization_config (fp8) config"));
}

TEST_CASE("Qwen2-MoE's shared expert and Qwen's sliding window read as their keys") {
  // The mapping rules on Qwen2-MoE's shape as the [model] key list states it (shared expert of 5632
  // next to routed experts of 1408): one shared expert of its own width; with use_sliding_window, layers
  // from max_window_layers on use the window.
  const std::string q =
      R"({"architectures": ["Qwen2MoeForCausalLM"], "hidden_size": 2048, "num_hidden_layers": 4,
          "num_attention_heads": 16, "num_key_value_heads": 16, "intermediate_size": 5632,
          "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632, "num_experts": 60,
          "num_experts_per_tok": 4, "decoder_sparse_step": 1, "mlp_only_layers": [], "use_sliding_window": true,
          "sliding_window": 4096, "max_window_layers": 2, "vocab_size": 151936, "qkv_bias": true})";
  const models::HfModelTable t = models::derive_hf_model(q, "cfg.json", "m");
  CHECK(t.model["shared_experts"].value_or(0) == 1);
  CHECK(t.model["shared_intermediate_size"].value_or(0) == 5632);
  CHECK(t.model["head_dim"].value_or(0) == 128);  // 2048 / 16
  toml::array types;
  for (const char* s : {"full", "full", "sliding", "sliding"}) {
    types.push_back(std::string(s));
  }
  CHECK(*t.model["layer_types"].as_array() == types);
  CHECK(t.model["sliding_window"].value_or(0) == 4096);
}
