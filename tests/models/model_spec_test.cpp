#include <catch2/catch.hpp>

#include "models/model_spec.hpp"
#include "sim/core/params.hpp"

using namespace epsim;

namespace {
models::ModelSpec preset(const std::string& name) {
  core::ParamTable t({core::ParamLayer{&models::model_presets().get(name, "test", "model"), name}}, "model");
  return models::parse_model_spec(t);
}
}  // namespace

TEST_CASE("the four required presets exist and parse") {
  for (const char* name : {"mixtral-8x7b", "qwen3-30b-a3b", "qwen3-235b-a22b", "deepseek-v3"}) {
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
  CHECK(ds.weight_bytes == 1);
}
