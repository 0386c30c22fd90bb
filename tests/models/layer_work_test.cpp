// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include "core/params.hpp"
#include "models/layer_work.hpp"

using namespace epsim;

namespace {
models::ModelSpec preset(const std::string& name) {
  return models::load_model_preset(name);
}
}  // namespace

TEST_CASE("GQA attention of Qwen3-30B-A3B by hand") {
  const auto m = preset("qwen3-30b-a3b");
  // q: 2048 x (32*128) = 8388608; k+v: 2048 x (2*4*128) = 2097152; o: 4096 x 2048 = 8388608.
  REQUIRE(models::attention_params(m) == 18874368.0);
  // K and V of 4 heads x 128 dims in BF16.
  REQUIRE(models::kv_bytes_per_token_layer(m) == 2048.0);
  // Prefill chunk of 100 tokens after 50 cached: pairs = 100*50 + 100*101/2 = 10050.
  models::AttentionBatch b{100.0, models::causal_pairs(50.0, 100.0), 50.0};
  REQUIRE(b.score_pairs == 10050.0);
  // Projections: 2*100*18874368 FLOPs; weights 18874368*2 + activations 100*(2*2048)*2 bytes.
  const auto proj = models::attention_projection_work(m, 100.0);
  REQUIRE(proj.flops == 3774873600.0);
  REQUIRE(proj.bytes == 37748736.0 + 819200.0);
  REQUIRE(proj.kind == hardware::OpKind::dense_gemm);
  // Core: 4*32*128 FLOPs per pair; KV (50 read + 100 written) * 2048 + query/output 100*(2*32*128)*2.
  const auto w = models::attention_core_work(m, b, hardware::OpKind::attention_prefill);
  REQUIRE(w.flops == 164659200.0);
  REQUIRE(w.bytes == 307200.0 + 1638400.0);
  REQUIRE(w.kind == hardware::OpKind::attention_prefill);
  REQUIRE(w.precision == hardware::Precision::bf16);
}

TEST_CASE("MLA attention of DeepSeek-V3 by hand (compressed KV, absorbed decode, expanded prefill)") {
  const auto m = preset("deepseek-v3");
  // q: 7168*1536 + 1536*128*(128+64); kv_a: 7168*(512+64); kv_b: 512*128*(128+128); o: 128*128*7168
  const double params = 11010048.0 + 37748736.0 + 4128768.0 + 16777216.0 + 117440512.0;
  REQUIRE(models::attention_params(m) == params);
  // Compressed cache: (512 + 64) BF16 elements per token per layer.
  REQUIRE(models::kv_bytes_per_token_layer(m) == 1152.0);
  // One decode token with 1000 cached: 1001 pairs, each 2*128*576 + 2*128*512 FLOPs.
  models::AttentionBatch b{1.0, models::causal_pairs(1000.0, 1.0), 1000.0};
  const auto proj = models::attention_projection_work(m, 1.0);
  REQUIRE(proj.flops == 2.0 * params);
  // FP8 weights (1 byte) + activations 1*2*7168*2
  REQUIRE(proj.bytes == params + 28672.0);
  REQUIRE(proj.precision == hardware::Precision::fp8);
  const auto w = models::attention_core_work(m, b, hardware::OpKind::attention_decode);
  REQUIRE(w.flops == 1001.0 * (147456.0 + 131072.0));
  // KV (1000 + 1) * 1152 + absorbed query 128*(512+64) and output 128*512 BF16 elements
  REQUIRE(w.bytes == 1001.0 * 1152.0 + (73728.0 + 65536.0) * 2.0);
  // Prefill of 1000 new tokens runs as multi-head attention over expanded K and V: 1000 * 1001 / 2
  // pairs, each 2*128*(128+64) + 2*128*128 FLOPs; the latent cache written, query (128*192) and output
  // (128*128) BF16 per token, and K (128*192) and V (128*128) expanded for every KV token.
  models::AttentionBatch p{1000.0, models::causal_pairs(0.0, 1000.0), 0.0};
  const auto pf = models::attention_core_work(m, p, hardware::OpKind::attention_prefill);
  REQUIRE(pf.flops == 500500.0 * (49152.0 + 32768.0));
  REQUIRE(pf.bytes == 1000.0 * 1152.0 + 1000.0 * 40960.0 * 2.0 + 1000.0 * 40960.0 * 2.0);
}

TEST_CASE("elementwise kernels of DeepSeek-V3 and Mixtral layers by hand") {
  const auto ds = preset("deepseek-v3");  // MLA, FP8 weights, top-8 of 256, one shared expert
  // Per token, BF16 elements read + written: 2 norms with residual (8 x 7168), latent norms
  // (2 x (1536 + 512)), RoPE of 128 query heads and the shared key (2 x 129 x 64), SiLU of 8 routed and
  // 1 shared expert (9 x 3 x 2048), weighted sum of 8 outputs into one (9 x 7168).
  const double elems = 57344.0 + 4096 + 16512 + 8 * 6144 + 64512 + 6144;
  // Bytes: FP8 quantisation of 7168 + 128 x 128 + 7168 inputs (read 2, write 1), router logits 2 x 256 x 4.
  const double bytes = elems * 2 + (7168.0 + 16384 + 7168) * 3 + 2048;
  REQUIRE(bytes == 489728.0);
  const hardware::KernelWork moe = models::elementwise_work(ds, 10.0, true, false);
  CHECK(moe.kind == hardware::OpKind::dense_gemm);
  CHECK(moe.flops == 0.0);
  CHECK(moe.bytes == Approx(10.0 * bytes));
  CHECK(moe.launches == 12.0);  // 2 norms, 2 latent norms + RoPE, 3 quantisations, top-k, SiLU, sum, shared SiLU
  // Contiguous layout: 8 FP8 copies in and 8 BF16 outputs back, each read and written.
  const hardware::KernelWork permuted = models::elementwise_work(ds, 10.0, true, true);
  CHECK(permuted.bytes == Approx(10.0 * (bytes + 2.0 * 8 * 7168 * 3)));
  CHECK(permuted.launches == 14.0);
  // A dense layer: no routing; SiLU over the 18432-wide FFN.
  const hardware::KernelWork dense = models::elementwise_work(ds, 1.0, false, true);
  CHECK(dense.bytes == Approx((57344.0 + 4096 + 16512 + 3 * 18432) * 2 + (7168.0 + 16384 + 7168) * 3));
  CHECK(dense.launches == 9.0);
  // Mixtral 8x7B: GQA (32 query, 8 KV heads of 128), BF16 weights (no quantisation), top-2, no shared.
  const auto mx = preset("mixtral-8x7b");
  const double mx_elems = 8.0 * 4096 + 2 * 40 * 128 + 2 * 3 * 14336 + 3 * 4096;
  const hardware::KernelWork mixtral = models::elementwise_work(mx, 1.0, true, true);
  CHECK(mixtral.bytes == Approx(mx_elems * 2 + 2 * 8 * 4 + 2.0 * 2 * 4096 * 4));
  CHECK(mixtral.launches == 8.0);  // 2 norms, RoPE, top-k, SiLU, sum, 2 permutations
}

TEST_CASE("chunked attention pairs by hand") {
  // Window 4: a query at position p sees (p mod 4) + 1 keys. Positions 2..9: 3 4 1 2 3 4 1 2 = 20.
  REQUIRE(models::chunked_causal_pairs(2, 8, 4) == 20.0);
  // A whole window from its start is a causal triangle: 4 * 5 / 2.
  REQUIRE(models::chunked_causal_pairs(8, 4, 4) == 10.0);
  // Windows larger than the context give the full causal count.
  REQUIRE(models::chunked_causal_pairs(50, 100, 8192) == models::causal_pairs(50, 100));
  REQUIRE(models::chunked_kv_read(10000, 8192) == 1808.0);
}

TEST_CASE("dense and expert FFN accounting by hand") {
  const auto ds = preset("deepseek-v3");
  // A first dense layer on 10 tokens: 2*10*3*7168*18432 FLOPs; FP8 weights 3*7168*18432 bytes.
  const auto dense = models::dense_ffn_work(ds, 10.0, 18432.0);
  REQUIRE(dense.flops == 7927234560.0);
  REQUIRE(dense.bytes == 396361728.0 + 10.0 * 2.0 * 7168.0 * 2.0);
  REQUIRE(models::expert_weight_bytes(ds) == 44040192.0);
  // Experts: FLOPs follow padded tokens; bytes follow activated experts and real tokens.
  const auto ex = models::expert_ffn_work(ds, 64.0, 40.0, 3.0);
  REQUIRE(ex.flops == 2.0 * 64.0 * 3.0 * 7168.0 * 2048.0);
  REQUIRE(ex.bytes == 3.0 * 44040192.0 + 40.0 * 2.0 * 7168.0 * 2.0);
  REQUIRE(ex.kind == hardware::OpKind::expert_ffn);
  const auto q30 = preset("qwen3-30b-a3b");
  REQUIRE(models::expert_weight_bytes(q30) == 3.0 * 2048.0 * 768.0 * 2.0);
}

TEST_CASE("GEMM output shapes for tile waves and attention head dims by hand") {
  const auto ds = preset("deepseek-v3");
  // The projections as one GEMM of input width hidden: n = parameters / 7168 (see the MLA case above).
  const double params = 11010048.0 + 37748736.0 + 4128768.0 + 16777216.0 + 117440512.0;
  const auto proj = models::attention_projection_work(ds, 300.0);
  CHECK(proj.gemm_m == 300.0);
  CHECK(proj.gemm_n == params / 7168.0);
  // Dense FFN: gate, up and down as n = 3 x 18432; LM head: n = vocab 129280; router: n = 256 experts.
  CHECK(models::dense_ffn_work(ds, 10.0, 18432.0).gemm_n == 55296.0);
  CHECK(models::lm_head_work(ds, 5.0).gemm_n == 129280.0);
  CHECK(models::lm_head_work(ds, 5.0).gemm_m == 5.0);
  CHECK(models::router_work(ds, 5.0).gemm_n == 256.0);
  // Kernels that are not one GEMM carry no shape: no tile waves.
  CHECK(models::expert_ffn_work(ds, 64.0, 40.0, 3.0).gemm_m == 0.0);
  CHECK(models::elementwise_work(ds, 64.0, true, true).gemm_m == 0.0);
  // Head dims of the score products: MLA decode 512 + 64 (absorbed), MLA prefill 128 + 64, GQA 128.
  models::AttentionBatch b{1.0, 1.0, 0.0};
  CHECK(models::attention_core_work(ds, b, hardware::OpKind::attention_decode).head_dim == 576.0);
  CHECK(models::attention_core_work(ds, b, hardware::OpKind::attention_prefill).head_dim == 192.0);
  CHECK(models::attention_core_work(preset("qwen3-30b-a3b"), b, hardware::OpKind::attention_prefill).head_dim == 128.0);
}
