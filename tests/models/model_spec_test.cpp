// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include "core/params.hpp"
#include "models/layer_work.hpp"
#include "models/model_spec.hpp"

using namespace epsim;

namespace {
models::ModelSpec preset(const std::string& name) {
  return models::load_model_preset(name);
}
}  // namespace

TEST_CASE("every required preset exists and parses") {
  for (const char* name :
       {"mixtral-8x7b", "mixtral-8x22b", "deepseek-v2-lite", "deepseekmoe-16b", "deepseek-v3", "qwen3-30b-a3b",
        "qwen3-235b-a22b", "llama-4-scout-17b-16e", "hunyuan-a13b", "olmoe-1b-7b"}) {
    INFO(name);
    REQUIRE(models::model_presets().contains(name));
    REQUIRE_NOTHROW(preset(name));
  }
}

TEST_CASE("preset values equal the published config.json values") {
  const auto mixtral = preset("mixtral-8x7b");
  CHECK(mixtral.hidden_size == 4096);
  CHECK(mixtral.moe_intermediate_size == 14336);
  CHECK(mixtral.num_layers == 32);
  CHECK(mixtral.routed_experts == 8);
  CHECK(mixtral.top_k == 2);
  CHECK(mixtral.num_heads == 32);
  CHECK(mixtral.num_kv_heads == 8);
  CHECK(mixtral.head_dim == 128);
  CHECK(mixtral.vocab_size == 32000);
  CHECK(mixtral.num_moe_layers() == 32);

  const auto q30 = preset("qwen3-30b-a3b");
  CHECK(q30.hidden_size == 2048);
  CHECK(q30.moe_intermediate_size == 768);
  CHECK(q30.num_layers == 48);
  CHECK(q30.routed_experts == 128);
  CHECK(q30.top_k == 8);
  CHECK(q30.num_heads == 32);
  CHECK(q30.num_kv_heads == 4);
  CHECK(q30.vocab_size == 151936);

  const auto q235 = preset("qwen3-235b-a22b");
  CHECK(q235.hidden_size == 4096);
  CHECK(q235.moe_intermediate_size == 1536);
  CHECK(q235.num_layers == 94);
  CHECK(q235.num_heads == 64);
  CHECK(q235.num_kv_heads == 4);
  CHECK(q235.routed_experts == 128);

  const auto ds = preset("deepseek-v3");
  CHECK(ds.hidden_size == 7168);
  CHECK(ds.num_layers == 61);
  CHECK(ds.first_dense_layers == 3);
  CHECK(ds.num_moe_layers() == 58);
  CHECK(ds.dense_intermediate_size == 18432);
  CHECK(ds.moe_intermediate_size == 2048);
  CHECK(ds.routed_experts == 256);
  CHECK(ds.shared_experts == 1);
  CHECK(ds.top_k == 8);
  CHECK(ds.expert_groups == 8);
  CHECK(ds.attention == models::AttentionKind::mla);
  CHECK(ds.num_heads == 128);
  CHECK(ds.q_lora_rank == 1536);
  CHECK(ds.kv_lora_rank == 512);
  CHECK(ds.qk_nope_head_dim == 128);
  CHECK(ds.qk_rope_head_dim == 64);
  CHECK(ds.v_head_dim == 128);
  CHECK(ds.vocab_size == 129280);
  CHECK(ds.weight_bytes() == 1.0);

  const auto x22 = preset("mixtral-8x22b");
  CHECK(x22.hidden_size == 6144);
  CHECK(x22.num_layers == 56);
  CHECK(x22.moe_intermediate_size == 16384);
  CHECK(x22.num_heads == 48);
  CHECK(x22.num_kv_heads == 8);

  const auto lite = preset("deepseek-v2-lite");
  CHECK(lite.attention == models::AttentionKind::mla);
  CHECK(lite.q_lora_rank == 0);
  CHECK(lite.kv_lora_rank == 512);
  CHECK(lite.num_heads == 16);
  CHECK(lite.first_dense_layers == 1);
  CHECK(lite.dense_intermediate_size == 10944);
  CHECK(lite.moe_intermediate_size == 1408);
  CHECK(lite.routed_experts == 64);
  CHECK(lite.shared_experts == 2);
  CHECK(lite.top_k == 6);

  const auto dsmoe = preset("deepseekmoe-16b");
  CHECK(dsmoe.attention == models::AttentionKind::gqa);
  CHECK(dsmoe.num_kv_heads == 16);
  CHECK(dsmoe.num_layers == 28);

  const auto scout = preset("llama-4-scout-17b-16e");
  CHECK(scout.hidden_size == 5120);
  CHECK(scout.routed_experts == 16);
  CHECK(scout.top_k == 1);
  CHECK(scout.shared_experts == 1);
  CHECK(scout.vocab_size == 202048);
  CHECK(scout.attention_chunk_size == 8192);
  // NoPE layers 3, 7, ..., 47 attend globally; the other 36 are chunked.
  int chunked = 0;
  for (int l = 0; l < 48; ++l) {
    chunked += scout.is_chunked_attention_layer(l) ? 1 : 0;
  }
  CHECK(chunked == 36);
  CHECK_FALSE(scout.is_chunked_attention_layer(3));

  const auto hy = preset("hunyuan-a13b");
  CHECK(hy.routed_experts == 64);
  CHECK(hy.top_k == 8);
  CHECK(hy.vocab_size == 128167);
  CHECK(hy.tie_word_embeddings);

  const auto olmoe = preset("olmoe-1b-7b");
  CHECK(olmoe.num_layers == 16);
  CHECK(olmoe.moe_intermediate_size == 1024);
  CHECK(olmoe.vocab_size == 50304);
}

TEST_CASE("parameter counts from the presets match the published totals") {
  // Total / active parameters as their authors publish them (billions). Norms are not counted, so a
  // 2 % tolerance on totals, 5 % on active counts. Authors count the active embeddings differently: most
  // count the embedding and the LM head, GLM and MiniMax neither, OpenAI the LM head only (the embedding is
  // a lookup; gpt-oss model card, arXiv 2508.10925, table 1).
  enum class Counts { both, neither, head_only };
  struct Case {
    const char* name;
    double total;
    double active;
    Counts embeddings = Counts::both;
  };
  const Case cases[] = {
      {"mixtral-8x7b", 46.7, 12.9},
      {"mixtral-8x22b", 141.0, 39.0},
      {"qwen3-30b-a3b", 30.5, 3.3},
      {"qwen3-235b-a22b", 235.0, 22.0},
      {"deepseek-v3", 671.0, 37.0},
      {"llama-4-scout-17b-16e", 109.0, 17.0},
      {"hunyuan-a13b", 80.0, 13.0},
      {"olmoe-1b-7b", 6.9, 1.3},
      {"deepseekmoe-16b", 16.4, 0.0},
      {"deepseek-v2-lite", 15.7, 0.0},
      // Issue 39's presets. Kimi K2: 1.04T total, 32.6B activated (tech report, arXiv 2507.20534);
      // DeepSeek-V3.2: 671B + 14B MTP, 37B activated; gpt-oss: 116.83B / 5.13B and 20.91B / 3.61B;
      // GLM-4.5: 355B / 32B; MiniMax-M2(.5): 230B / 10B; Llama-4 Maverick: 400B / 17B; Qwen3-Next: 80B
      // (its "3B activated" is checked in layer_mechanisms_test.cpp).
      {"kimi-k2", 1040.0, 32.6},
      {"deepseek-v3.2", 671.0, 37.0},
      {"gpt-oss-120b", 116.83, 5.13, Counts::head_only},
      {"gpt-oss-20b", 20.91, 3.61, Counts::head_only},
      {"glm-4.5", 355.0, 32.0, Counts::neither},
      {"qwen3-next-80b-a3b", 80.0, 0.0},
      {"minimax-m2.5", 230.0, 10.0, Counts::neither},
      {"llama-4-maverick-17b-128e", 400.0, 17.0},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const auto m = preset(c.name);
    CHECK(models::total_params(m) / 1e9 == Approx(c.total).epsilon(0.02));
    if (c.active > 0.0) {
      const double rows = static_cast<double>(m.vocab_size) * static_cast<double>(m.hidden_size);
      const double left_out = c.embeddings == Counts::both        ? 0.0
                              : c.embeddings == Counts::head_only ? rows
                                                                  : (m.tie_word_embeddings ? 1.0 : 2.0) * rows;
      CHECK((models::active_params(m) - left_out) / 1e9 == Approx(c.active).epsilon(0.05));
    }
  }
}
