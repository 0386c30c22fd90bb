// SPDX-License-Identifier: Apache-2.0
// The work of issue 39's mechanisms priced by hand: sliding windows, DeepSeek Sparse Attention, linear
// attention (Gated DeltaNet), FP4 weight formats, the gated output, hybrid layer stacks and their memory.
// The models are written here from the authors' config.json values (not read from presets).
#include <toml++/toml.h>

#include <catch2/catch.hpp>

#include "core/params.hpp"
#include "models/layer_work.hpp"

using namespace epsim;

namespace {

// gpt-oss-120b (openai/gpt-oss-120b config.json): 36 layers alternating sliding (128) and full attention,
// 64 query heads and 8 KV heads of 64, 128 experts of 2880 top-4 in MXFP4, vocabulary 201088.
models::ModelSpec gpt_oss_120b() {
  models::ModelSpec m;
  m.hidden_size = 2880;
  m.num_layers = 36;
  m.moe_intermediate_size = 2880;
  m.routed_experts = 128;
  m.top_k = 4;
  m.num_heads = 64;
  m.num_kv_heads = 8;
  m.head_dim = 64;
  m.vocab_size = 201088;
  m.sliding_window = 128;
  m.attention_sinks = true;
  for (int l = 0; l < 36; ++l) {
    m.layer_types.push_back(l % 2 == 0 ? models::LayerAttention::sliding : models::LayerAttention::full);
  }
  m.expert_format = models::WeightFormat::mxfp4;
  return m;
}

// Qwen3-Next-80B-A3B (Qwen/Qwen3-Next-80B-A3B-Instruct config.json): 48 layers, every 4th full (gated)
// attention of 16 heads and 2 KV heads of 256, the rest Gated DeltaNet with 16 key heads and 32 value heads
// of 128 and a conv of 4; 512 experts of 512 top-10 and one shared expert of 512; vocabulary 151936.
models::ModelSpec qwen3_next() {
  models::ModelSpec m;
  m.hidden_size = 2048;
  m.num_layers = 48;
  m.moe_intermediate_size = 512;
  m.routed_experts = 512;
  m.shared_experts = 1;
  m.top_k = 10;
  m.num_heads = 16;
  m.num_kv_heads = 2;
  m.head_dim = 256;
  m.attention_output_gate = true;
  m.vocab_size = 151936;
  m.linear_num_key_heads = 16;
  m.linear_num_value_heads = 32;
  m.linear_key_head_dim = 128;
  m.linear_value_head_dim = 128;
  m.linear_conv_kernel_dim = 4;
  for (int l = 0; l < 48; ++l) {
    m.layer_types.push_back((l + 1) % 4 == 0 ? models::LayerAttention::full : models::LayerAttention::linear);
  }
  return m;
}

// DeepSeek-V3.2-Exp: DeepSeek-V3's shapes and a lightning indexer of 64 heads of 128 selecting 2048 tokens.
models::ModelSpec deepseek_v32() {
  models::ModelSpec m = models::load_model_preset("deepseek-v3");
  m.index_n_heads = 64;
  m.index_head_dim = 128;
  m.index_topk = 2048;
  return m;
}

// Brute force of the capped pairs: each position p sees min(p + 1, window) keys.
double capped_by_loop(std::int64_t context, std::int64_t chunk, std::int64_t window) {
  double pairs = 0.0;
  for (std::int64_t p = context; p < context + chunk; ++p) {
    pairs += static_cast<double>(std::min(p + 1, window));
  }
  return pairs;
}

}  // namespace

TEST_CASE("capped causal pairs equal a brute-force count") {
  for (const std::int64_t window : {1, 7, 128, 2048}) {
    for (const std::int64_t context : {0, 1, 5, 127, 128, 3000}) {
      for (const std::int64_t chunk : {1, 2, 64, 500}) {
        INFO(window << " " << context << " " << chunk);
        REQUIRE(models::capped_causal_pairs(context, chunk, window) == capped_by_loop(context, chunk, window));
      }
    }
  }
  // By hand: 64 prompt tokens under a window of 16: 1 + ... + 15 = 120, then 49 positions of 16 = 784.
  REQUIRE(models::capped_causal_pairs(0, 64, 16) == 904.0);
}

TEST_CASE("gpt-oss-120b: parameters against OpenAI's published breakdown, sliding-window memory by hand") {
  const models::ModelSpec m = gpt_oss_120b();
  // q 2880 x 4096, k and v 2880 x 512 each, o 4096 x 2880 per layer.
  const double attention = 2880.0 * 4096 * 2 + 2880.0 * 512 * 2;
  REQUIRE(models::attention_params(m) == attention);
  // The model card (arXiv 2508.10925, table 1): attention 0.96B, MLP 114.71B, embedding + unembedding
  // 1.16B, total 116.83B, active 5.13B (counting the unembedding, not the embedding lookup). Biases and
  // norms are not counted here: 0.5 % tolerance on the parts.
  CHECK(36.0 * attention / 1e9 == Approx(0.96).epsilon(0.005));
  const double mlp = 36.0 * (128.0 * 3 * 2880 * 2880 + 2880.0 * 128);
  CHECK(mlp / 1e9 == Approx(114.71).epsilon(0.005));
  CHECK(models::total_params(m) / 1e9 == Approx(116.83).epsilon(0.005));
  const double embedding = 201088.0 * 2880;
  CHECK((models::active_params(m) - embedding) / 1e9 == Approx(5.13).epsilon(0.01));
  // MXFP4 experts: 4.25 bits per weight; the rest BF16.
  REQUIRE(models::expert_weight_bytes(m) == 3.0 * 2880 * 2880 * 0.53125);
  REQUIRE(models::non_expert_weight_bytes(m) == (models::total_params(m) - 36.0 * 128 * 3 * 2880 * 2880) * 2.0);
  // K and V of 8 heads x 64 in BF16 = 2048 bytes per token and layer; the 18 full layers grow, the 18
  // sliding layers hold their window of 128 tokens.
  REQUIRE(models::kv_bytes_per_token_layer(m) == 2048.0);
  REQUIRE(models::growing_kv_bytes_per_token(m) == 18.0 * 2048);
  REQUIRE(models::state_bytes_per_request(m) == 18.0 * 128 * 2048);
  // A decode after 1000 tokens on a sliding layer: 128 pairs, 127 keys read from the cache.
  REQUIRE(models::capped_causal_pairs(1000, 1, 128) == 128.0);
}

TEST_CASE("FP4 expert weights: bytes with their scales, FP4 precision") {
  models::ModelSpec m = gpt_oss_120b();
  const auto w = models::expert_ffn_work(m, 64.0, 50.0, 3.0);
  REQUIRE(w.precision == hardware::Precision::fp4);
  REQUIRE(w.flops == 2.0 * 64 * 3 * 2880 * 2880);
  // Three activated experts' MXFP4 weights (4 bits + an 8-bit scale per 32) and 50 tokens in and out.
  REQUIRE(w.bytes == 3.0 * 3 * 2880 * 2880 * (4.0 + 8.0 / 32) / 8 + 50.0 * 2 * 2880 * 2);
  m.expert_format = models::WeightFormat::nvfp4;  // 4 bits + an 8-bit scale per 16
  REQUIRE(models::expert_weight_bytes(m) == 3.0 * 2880 * 2880 * 0.5625);
  // Projections stay BF16.
  REQUIRE(models::attention_projection_work(m, 1.0).precision == hardware::Precision::bf16);
}

TEST_CASE("Qwen3-Next: gated attention, Gated DeltaNet work and state by hand, parameters against 80B-A3B") {
  const models::ModelSpec m = qwen3_next();
  // q (with its gate) 2048 x 2 x 4096, k and v 2048 x 512 each, o 4096 x 2048.
  REQUIRE(models::attention_params(m) == 2048.0 * 8192 + 2048.0 * 1024 + 4096.0 * 2048);
  // Gated DeltaNet: qkvz 2048 x (2*2048 + 2*4096), ba 2048 x 64, out 4096 x 2048, conv 4 x 8192 channels.
  const double linear = 2048.0 * 12288 + 2048.0 * 64 + 4096.0 * 2048 + 4.0 * 8192;
  REQUIRE(models::linear_attention_params(m) == linear);
  // Qwen's model card: 80B total (79B without the embedding and LM head), "3B activated" (A3B, rounded,
  // no breakdown published). Here: 3.25B activated without the embedding and LM head, 3.87B with them;
  // the card's non-embedding total says its counts leave them out. Norms and gates not counted.
  const double embeddings = 2.0 * 151936 * 2048;
  CHECK(models::total_params(m) / 1e9 == Approx(80.0).epsilon(0.02));
  CHECK((models::total_params(m) - embeddings) / 1e9 == Approx(79.0).epsilon(0.01));
  CHECK((models::active_params(m) - embeddings) / 1e9 == Approx(3.0).epsilon(0.1));

  // One decode token of one request: 32 value heads x 7 x 128 x 128 (decay, k.S, the delta update, q.S)
  // + the conv (2 x 4 x 8192); its state (32 x 128 x 128 FP32 + 3 x 8192 BF16 conv inputs) read and
  // written, q and k (2 x 2048) and v, z and the output (3 x 4096) BF16.
  const double state = 32.0 * 128 * 128 * 4 + 3.0 * 8192 * 2;
  REQUIRE(models::linear_state_bytes(m) == state);
  const auto d = models::linear_attention_work(m, {1.0, 1.0}, hardware::OpKind::attention_decode);
  REQUIRE(d.kind == hardware::OpKind::linear_attention);
  REQUIRE(d.flops == 32.0 * 7 * 128 * 128 + 2.0 * 4 * 8192);
  REQUIRE(d.bytes == 2.0 * state + (2.0 * 2048 + 3.0 * 4096) * 2);
  // A 1000-token prefill chunk: per token and head 2 x 64 x 256 (intra-chunk) + 5 x 128^2 (state)
  // + the delta rule's 2 x 64 x 384 + 2 x 128^2.
  const auto p = models::linear_attention_work(m, {1000.0, 1.0}, hardware::OpKind::attention_prefill);
  REQUIRE(p.flops == 1000.0 * (32.0 * (32768 + 81920 + 49152 + 32768) + 65536));
  // Memory: 12 full layers grow by 2 x 2 x 256 x 2 bytes a token; 36 linear layers hold their state.
  REQUIRE(models::growing_kv_bytes_per_token(m) == 12.0 * 2048);
  REQUIRE(models::state_bytes_per_request(m) == 36.0 * state);
}

TEST_CASE("DeepSeek Sparse Attention: indexer and selected attention by hand") {
  const models::ModelSpec m = deepseek_v32();
  // Indexer: wq_b 1536 x (64 x 128), wk 7168 x 128, weights 7168 x 64, on top of V3's attention.
  const double v3_attention = models::attention_params(models::load_model_preset("deepseek-v3"));
  REQUIRE(models::attention_params(m) == v3_attention + 1536.0 * 8192 + 7168.0 * 128 + 7168.0 * 64);
  // Keys: 128 FP8 + one FP32 scale per token and layer, beside the 576 BF16 latent entries.
  REQUIRE(models::index_key_bytes_per_token(m) == 132.0);
  REQUIRE(models::kv_bytes_per_token_layer(m) == 1152.0 + 132.0);
  // DeepSeek-V3.2-Exp's card: 671B parameters (685B with the MTP module), 37B activated.
  CHECK(models::total_params(m) / 1e9 == Approx(671.0).epsilon(0.02));
  CHECK(models::active_params(m) / 1e9 == Approx(37.0).epsilon(0.05));

  // A decode token after 10000 cached: the indexer scores 10001 pairs (64 heads x 128 FP8 products, the
  // ReLU, weight and sum per head), reads 10001 keys, writes 2048 indices.
  const models::AttentionBatch all{1.0, models::causal_pairs(10000.0, 1.0), 10000.0};
  const auto idx = models::indexer_work(m, all);
  REQUIRE(idx.kind == hardware::OpKind::sparse_indexer);
  REQUIRE(idx.precision == hardware::Precision::fp8);
  REQUIRE(idx.flops == 10001.0 * (2.0 * 8192 + 3.0 * 64));
  REQUIRE(idx.bytes == 10001.0 * 132 + 8192.0 + 2048.0 * 4);
  // The attention then covers 2048 pairs in the absorbed form, reading the 2048 selected entries.
  const models::AttentionBatch sel{1.0, models::capped_causal_pairs(10000, 1, 2048), 2048.0};
  REQUIRE(sel.score_pairs == 2048.0);
  const auto core = models::attention_core_work(m, sel, hardware::OpKind::attention_decode);
  REQUIRE(core.flops == 2048.0 * (2.0 * 128 * 576 + 2.0 * 128 * 512));
  REQUIRE(core.bytes == 2049.0 * 1152 + (128.0 * 576 + 128.0 * 512) * 2);
  // Prefill runs absorbed too (MQA mode): the same FLOPs per pair.
  const auto pf = models::attention_core_work(m, sel, hardware::OpKind::attention_prefill);
  REQUIRE(pf.flops == core.flops);
}

TEST_CASE("FP8 attention math and an FP8 KV cache") {
  models::ModelSpec m = models::load_model_preset("qwen3-30b-a3b");
  m.attention_precision = hardware::Precision::fp8;
  m.kv_cache_bytes = 1;
  const models::AttentionBatch b{1.0, 101.0, 100.0};
  const auto w = models::attention_core_work(m, b, hardware::OpKind::attention_decode);
  REQUIRE(w.precision == hardware::Precision::fp8);
  // K and V of 4 heads x 128 in FP8 for 101 tokens, query and output BF16.
  REQUIRE(w.bytes == 101.0 * 1024 + 2.0 * 32 * 128 * 2);
}

TEST_CASE("layer_types and the per-layer mechanisms' keys are validated with one clear error") {
  const auto parse = [](const std::string& extra) {
    const std::string text =
        "hidden_size = 64\nnum_layers = 2\nmoe_intermediate_size = 32\nrouted_experts = 4\n"
        "top_k = 2\nnum_heads = 4\nvocab_size = 100\n" +
        extra;
    const toml::table table = toml::parse(text);
    core::ParamTable t({core::ParamLayer{&table, "m.toml"}}, "model");
    return models::parse_model_spec(t);
  };
  const auto m = parse("layer_types = [\"sliding\", \"full\"]\nsliding_window = 8\n");
  REQUIRE(m.attention_of(0) == models::LayerAttention::sliding);
  REQUIRE(m.attention_of(1) == models::LayerAttention::full);
  REQUIRE_THROWS_WITH(parse("layer_types = [\"full\"]\n"), Catch::Contains("layer_types") && Catch::Contains("2"));
  REQUIRE_THROWS_WITH(parse("layer_types = [\"full\", \"dense\"]\n"),
                      Catch::Contains("entry 1") && Catch::Contains("dense"));
  REQUIRE_THROWS_WITH(parse("layer_types = [\"sliding\", \"full\"]\n"), Catch::Contains("sliding_window"));
  REQUIRE_THROWS_WITH(parse("layer_types = [\"linear\", \"full\"]\n"), Catch::Contains("linear_num_key_heads"));
  REQUIRE_THROWS_WITH(parse("layer_types = [\"linear\", \"linear\"]\nlinear_num_key_heads = 2\n"
                            "linear_key_head_dim = 8\n"),
                      Catch::Contains("at least one full or chunked layer"));
  REQUIRE_THROWS_WITH(parse("index_topk = 64\n"), Catch::Contains("index_topk") && Catch::Contains("MLA"));
  REQUIRE_THROWS_WITH(parse("expert_weight_dtype = \"fp2\"\n"), Catch::Contains("expert_weight_dtype"));
  const auto fp4 = parse("expert_weight_dtype = \"nvfp4\"\nweight_dtype = \"fp8\"\n");
  REQUIRE(fp4.expert_format == models::WeightFormat::nvfp4);
  REQUIRE(fp4.weight_format == models::WeightFormat::fp8);
  REQUIRE(parse("weight_dtype = \"mxfp4\"\n").expert_format == models::WeightFormat::mxfp4);
}
