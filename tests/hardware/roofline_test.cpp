// SPDX-License-Identifier: Apache-2.0
#include <toml++/toml.h>
#include <catch2/catch.hpp>

#include "core/params.hpp"
#include "hardware/gpu_spec.hpp"
#include "hardware/roofline.hpp"
#include "hardware/spec_toml.hpp"

using namespace epsim;

namespace {

hardware::GpuSpec preset(const std::string& name) {
  return hardware::load_gpu_preset(name);
}

// One Mixtral-8x7B expert (hidden 4096, FFN 14336, BF16) on n tokens, written out by hand:
// FLOPs = 2 * n * 3 * 4096 * 14336; bytes = 3 * 4096 * 14336 * 2 (weights) + n * 4096 * 2 * 2 (in + out).
hardware::KernelWork mixtral_expert(double n) {
  hardware::KernelWork w;
  w.kind = hardware::OpKind::expert_ffn;
  w.precision = hardware::Precision::bf16;
  w.tokens = n;
  w.flops = 2.0 * n * 3.0 * 4096.0 * 14336.0;
  w.bytes = 3.0 * 4096.0 * 14336.0 * 2.0 + n * 4096.0 * 2.0 * 2.0;
  return w;
}

}  // namespace

TEST_CASE("GPU presets carry the datasheet numbers") {
  const auto h100 = preset("h100");
  CHECK(h100.bf16_tflops == 989.0);
  CHECK(h100.fp8_tflops == 1979.0);
  CHECK(h100.hbm_gbps == 3350.0);
  CHECK(h100.memory_gib == 80.0);
  CHECK(h100.tdp_w == 700.0);
  const auto mi300x = preset("mi300x");
  CHECK(mi300x.bf16_tflops == 1307.4);
  CHECK(mi300x.hbm_gbps == 5300.0);
  CHECK(mi300x.memory_gib == 192.0);
  CHECK(preset("a100").fp8_tflops == 0.0);
  CHECK(preset("rtx4090").bf16_tflops == 165.2);
  CHECK(preset("l40").hbm_gbps == 864.0);
  CHECK(preset("gb200").bf16_tflops == 2500.0);
  CHECK(preset("mi325x").hbm_gbps == 6000.0);
  for (const char* name : {"a100", "h100", "h800", "h20", "h200", "b200", "gb200", "b300", "gb300", "mi300x", "mi325x",
                           "mi355x", "l40", "rtx4090", "rtx3090"}) {
    INFO(name);
    REQUIRE(hardware::gpu_presets().contains(name));
    REQUIRE(preset(name).tdp_w > 0.0);
  }
}

TEST_CASE("roofline on H100 and MI300X: a memory-bound and a compute-bound token count") {
  // Expert FFN family defaults: 65 % of peak FLOP/s, 80 % of memory bandwidth; 4 us launch.
  // H100: 989e3 * 0.65 = 642850 FLOP/ns, 3350 * 0.8 = 2680 B/ns. MI300X: its BF16 cap 0.5415 (AMD's measured
  // max-achievable FLOPs): 1307.4e3 * 0.5415 = 707957.1 FLOP/ns, 4240 B/ns.
  struct Case {
    const char* gpu;
    double tokens;
    double compute_ns;
    double memory_ns;
    double total_ns;
    hardware::Bound bound;
  };
  const Case cases[] = {
      {"h100", 16, 8768.988995877731, 131561.07462686568, 135561.07462686568, hardware::Bound::memory},
      {"h100", 4096, 2244861.182944699, 156503.8805970149, 2248861.182944699, hardware::Bound::compute},
      {"mi300x", 16, 7962.551086781954, 83156.52830188679, 87156.52830188679, hardware::Bound::memory},
      {"mi300x", 4096, 2038413.0782161802, 98922.2641509434, 2042413.0782161802, hardware::Bound::compute},
  };
  for (const Case& c : cases) {
    INFO(c.gpu << " " << c.tokens);
    const auto cost = hardware::roofline_cost(preset(c.gpu), mixtral_expert(c.tokens));
    REQUIRE(cost.compute_ns == Approx(c.compute_ns).epsilon(1e-12));
    REQUIRE(cost.memory_ns == Approx(c.memory_ns).epsilon(1e-12));
    REQUIRE(cost.total_ns == Approx(c.total_ns).epsilon(1e-12));
    REQUIRE(cost.bound == c.bound);
  }
}

TEST_CASE("efficiencies are per kernel family, FP8 uses the FP8 peak") {
  const auto h100 = preset("h100");
  auto w = mixtral_expert(4096);
  w.kind = hardware::OpKind::dense_gemm;  // 75 % of peak
  REQUIRE(hardware::roofline_cost(h100, w).compute_ns == Approx(w.flops / (989e3 * 0.75)));
  w.precision = hardware::Precision::fp8;
  REQUIRE(hardware::roofline_cost(h100, w).compute_ns == Approx(w.flops / (1979e3 * 0.75)));
  // A100 has no FP8: BF16 peak.
  REQUIRE(hardware::roofline_cost(preset("a100"), w).compute_ns == Approx(w.flops / (312e3 * 0.75)));
}

TEST_CASE("the tile follows vLLM's rule and the expert cost follows the tile staircase") {
  const auto h100 = preset("h100");
  // M <= local experts: tile 16; above: 64.
  REQUIRE(h100.moe_tile(8, 16) == 16);
  REQUIRE(h100.moe_tile(16, 16) == 16);
  REQUIRE(h100.moe_tile(17, 16) == 64);
  REQUIRE(hardware::pad_to_tile(0, 64) == 0);
  REQUIRE(hardware::pad_to_tile(1, 16) == 16);
  REQUIRE(hardware::pad_to_tile(17, 16) == 32);
  REQUIRE(hardware::pad_to_tile(4097, 64) == 4160);
  // Compute-bound: FLOPs follow padded tokens, so 4033..4096 real tokens cost the same compute and 4097
  // costs 64 tokens more.
  auto padded = [](double real, double pad) {
    auto w = mixtral_expert(real);
    w.flops = 2.0 * pad * 3.0 * 4096.0 * 14336.0;
    return w;
  };
  const double c4033 = hardware::roofline_cost(h100, padded(4033, 4096)).compute_ns;
  const double c4096 = hardware::roofline_cost(h100, padded(4096, 4096)).compute_ns;
  const double c4097 = hardware::roofline_cost(h100, padded(4097, 4160)).compute_ns;
  REQUIRE(c4033 == c4096);
  REQUIRE(c4097 - c4096 == Approx(2.0 * 64 * 3 * 4096 * 14336 / (989e3 * 0.65)));
}

TEST_CASE("a slow GPU stretches the kernel body but not the launch overhead") {
  hardware::RooflineCostModel m(preset("h100"), {1.0, 0.88});
  const auto w = mixtral_expert(16);
  REQUIRE(m.kernel_ns(0, w) == Approx(135561.07462686568));
  REQUIRE(m.kernel_ns(1, w) == Approx(131561.07462686568 / 0.88 + 4000.0));
}

TEST_CASE("stress dependence: a slow GPU shows its full slowdown compute-bound, a quarter memory-bound") {
  hardware::VariabilityConfig v;  // stress on by default: w = 0.25 at x <= 0.1, 1 at x >= 1
  hardware::RooflineCostModel m(preset("h100"), {1.0, 0.88}, v, core::RandomStreams(1));
  const auto compute_bound = mixtral_expert(4096);
  const auto memory_bound = mixtral_expert(1);
  REQUIRE(m.effective_speed(1, compute_bound) == Approx(0.88));
  REQUIRE(m.effective_speed(1, memory_bound) == Approx(1.0 - 0.12 * 0.25));
  REQUIRE(m.effective_speed(0, memory_bound) == 1.0);
  // In between, log-linear: the 128-token expert has intensity / ridge = (flops / bytes) / (642850 / 2680).
  const auto w128 = mixtral_expert(128);
  const double x = w128.flops / w128.bytes / (642850.0 / 2680.0);
  REQUIRE(x == Approx(0.530).margin(0.001));
  REQUIRE(hardware::intensity_over_ridge(preset("h100"), w128) == Approx(x));
  const double weight = 0.25 + 0.75 * std::log(x / 0.1) / std::log(10.0);
  REQUIRE(m.effective_speed(1, w128) == Approx(1.0 - 0.12 * weight));
}

TEST_CASE("a smooth knee blends the bounds as a p-norm and the fixed cost adds to the launch") {
  using epsim::hardware::roofline_body_ns;
  CHECK(roofline_body_ns(3.0, 4.0, 0.0) == 4.0);
  CHECK(roofline_body_ns(3.0, 4.0, 2.0) == Approx(5.0));  // sqrt(9 + 16)
  CHECK(roofline_body_ns(10.0, 10.0, 1.0) == Approx(20.0));
  CHECK(roofline_body_ns(1.0, 1e6, 4.0) == Approx(1e6));
  CHECK(roofline_body_ns(0.0, 0.0, 3.0) == 0.0);
  epsim::hardware::GpuSpec g = epsim::hardware::load_gpu_preset("h100");
  epsim::hardware::KernelWork w;
  w.kind = epsim::hardware::OpKind::dense_gemm;
  w.flops = 2.0 * 1024 * 4096 * 4096;
  w.bytes = 4096.0 * 4096 * 2 + 1024.0 * 8192 * 2;
  const double compute_ns = w.flops / (989e3 * 0.75);
  const double memory_ns = w.bytes / (3350.0 * 0.85);
  g.efficiency[0][0].knee = 2.0;
  g.efficiency[0][0].fixed_us = 3.0;
  CHECK(epsim::hardware::roofline_cost(g, w).total_ns ==
        Approx(std::sqrt(compute_ns * compute_ns + memory_ns * memory_ns) + (4.0 + 3.0) * 1e3));
  // Work standing for several kernels pays the launch and fixed cost once per kernel, the body once.
  w.launches = 5.0;
  CHECK(epsim::hardware::roofline_cost(g, w).total_ns ==
        Approx(std::sqrt(compute_ns * compute_ns + memory_ns * memory_ns) + 5.0 * (4.0 + 3.0) * 1e3));
}

namespace {

// A GPU preset's text with `extra` appended, parsed as a reader would.
hardware::GpuSpec parsed_gpu(const std::string& extra) {
  const std::string text =
      "name = \"g\"\nbf16_tflops = 1000.0\nfp8_tflops = 2000.0\nhbm_gbps = 4000.0\n"
      "memory_gib = 80.0\nsm_count = 100\n" +
      extra;
  const toml::table t = toml::parse(text);
  core::ParamTable p({core::ParamLayer{&t, "g.toml"}}, "gpu");
  hardware::GpuSpec g = hardware::parse_gpu_spec(p);
  p.finish();
  return g;
}

hardware::KernelWork gemm(double m, double n, double k, hardware::Precision p) {
  hardware::KernelWork w;
  w.kind = hardware::OpKind::dense_gemm;
  w.precision = p;
  w.flops = 2.0 * m * n * k;
  w.bytes = 0.0;  // compute only: the wave factor shows alone
  w.gemm_m = m;
  w.gemm_n = n;
  return w;
}

}  // namespace

TEST_CASE("[efficiency.<family>.<precision>] overrides the family's keys for that precision only") {
  const hardware::GpuSpec g = parsed_gpu(
      "[efficiency.dense_gemm]\ncompute = 0.5\nmemory = 0.6\n"
      "[efficiency.dense_gemm.fp8]\ncompute = 0.8\n");
  using hardware::OpKind;
  using hardware::Precision;
  CHECK(g.eff(OpKind::dense_gemm, Precision::bf16).compute == 0.5);
  CHECK(g.eff(OpKind::dense_gemm, Precision::fp8).compute == 0.8);
  CHECK(g.eff(OpKind::dense_gemm, Precision::fp8).memory == 0.6);  // not overridden: the family's
  CHECK(g.eff(OpKind::dense_gemm, Precision::fp4).compute == 0.5);
  // 2e9 FLOPs: BF16 at 0.5 x 1000 TFLOP/s = 4 us; FP8 at 0.8 x 2000 = 1.25 us; + 4 us launch each.
  hardware::KernelWork w = gemm(1000.0, 1000.0, 1000.0, Precision::bf16);
  w.gemm_m = 0.0;
  CHECK(hardware::roofline_cost(g, w).total_ns == Approx(4000.0 + 4000.0));
  w.precision = Precision::fp8;
  CHECK(hardware::roofline_cost(g, w).total_ns == Approx(1250.0 + 4000.0));
  // No FP4 units: FP4 runs at the FP8 peak with the FP4 efficiencies (here the family's 0.5): 2 us.
  w.precision = Precision::fp4;
  CHECK(hardware::roofline_cost(g, w).total_ns == Approx(2000.0 + 4000.0));
  const hardware::GpuSpec fp4 = parsed_gpu("fp4_tflops = 4000.0\n[efficiency.dense_gemm.fp4]\ncompute = 0.25\n");
  CHECK(hardware::roofline_cost(fp4, w).total_ns == Approx(2e9 / (4000e3 * 0.25) + 4000.0));
  CHECK(hardware::peak_flop_per_ns(preset("b200"), Precision::fp4) == 9000e3);
  CHECK(hardware::peak_flop_per_ns(preset("gb200"), Precision::fp4) == 10000e3);
  CHECK(hardware::peak_flop_per_ns(preset("h100"), Precision::fp4) == 1979e3);  // Hopper: no FP4, FP8's
  CHECK(hardware::peak_flop_per_ns(preset("a100"), Precision::fp4) == 312e3);   // no FP8 either: BF16's
}

TEST_CASE("memory efficiencies stay under the GPU's max_memory_efficiency") {
  CHECK(preset("h100").max_memory_efficiency == 0.8955);  // FlashMLA's 3,000 GB/s of 3,350
  CHECK(parsed_gpu("max_memory_efficiency = 0.9\n[efficiency.dense_gemm]\nmemory = 0.9\n")
            .eff(hardware::OpKind::dense_gemm, hardware::Precision::fp8)
            .memory == 0.9);
  CHECK_THROWS_WITH(parsed_gpu("max_memory_efficiency = 0.9\n[efficiency.expert_ffn.fp8]\nmemory = 0.95\n"),
                    Catch::Contains("efficiency.expert_ffn.fp8.memory") && Catch::Contains("0.9"));
  CHECK_THROWS_WITH(parsed_gpu("[efficiency.dense_gemm.fp16]\ncompute = 0.5\n"), Catch::Contains("fp16"));
}

TEST_CASE("compute efficiencies are capped per precision at max_compute_efficiency") {
  using hardware::OpKind;
  using hardware::Precision;
  // Defaults above the cap are lowered to it; values below it (a family table, a precision table) stay.
  const hardware::GpuSpec g = parsed_gpu(
      "[max_compute_efficiency]\nbf16 = 0.6\nfp8 = 0.5\n[efficiency.expert_ffn]\ncompute = 0.2\n"
      "[efficiency.attention_prefill.bf16]\ncompute = 0.55\n");
  CHECK(g.eff(OpKind::dense_gemm, Precision::bf16).compute == 0.6);  // default 0.75
  CHECK(g.eff(OpKind::dense_gemm, Precision::fp8).compute == 0.5);
  CHECK(g.eff(OpKind::dense_gemm, Precision::fp4).compute == 0.75);  // no cap given for FP4
  CHECK(g.eff(OpKind::expert_ffn, Precision::fp8).compute == 0.2);   // the user's, under the cap
  CHECK(g.eff(OpKind::attention_prefill, Precision::bf16).compute == 0.55);
  CHECK(g.eff(OpKind::attention_prefill, Precision::fp8).compute == 0.5);  // default 0.6
  // The cap round-trips through the spec's TOML, and a cap outside (0, 1] is refused by name.
  CHECK(hardware::read_gpu_spec_toml(hardware::gpu_spec_toml(g), "round trip").max_compute_efficiency ==
        g.max_compute_efficiency);
  CHECK_THROWS_WITH(parsed_gpu("[max_compute_efficiency]\nfp8 = 0\n"), Catch::Contains("max_compute_efficiency.fp8"));
  CHECK_THROWS_WITH(parsed_gpu("[max_compute_efficiency]\nfp16 = 0.5\n"), Catch::Contains("fp16"));
}

TEST_CASE("a user's family efficiency beats a preset's precision table, not the user's own") {
  using hardware::OpKind;
  using hardware::Precision;
  // The preset (lower layer) has a family value and an FP8 table, as h100-calibrated's fit does.
  const toml::table preset = toml::parse(
      "name = \"g\"\nbf16_tflops = 1000.0\nfp8_tflops = 2000.0\nhbm_gbps = 4000.0\nmemory_gib = 80.0\n"
      "[efficiency.expert_ffn]\ncompute = 0.6\nmemory = 0.7\n[efficiency.expert_ffn.fp8]\ncompute = 0.5\nknee = 4.0\n");
  const auto parse = [&](const std::string& user_text) {
    const toml::table user = toml::parse(user_text);
    core::ParamTable p({core::ParamLayer{&user, "user.toml"}, core::ParamLayer{&preset, "preset g"}}, "gpu");
    hardware::GpuSpec g = hardware::parse_gpu_spec(p);
    p.finish();
    return g;
  };
  // No user keys: the preset's FP8 table over its family.
  const hardware::GpuSpec plain = parse("");
  CHECK(plain.eff(OpKind::expert_ffn, Precision::fp8).compute == 0.5);
  CHECK(plain.eff(OpKind::expert_ffn, Precision::bf16).compute == 0.6);
  // The user's family compute reaches every precision, the preset's FP8 knee stays (the user set none).
  const hardware::GpuSpec family = parse("[efficiency.expert_ffn]\ncompute = 0.2\n");
  CHECK(family.eff(OpKind::expert_ffn, Precision::fp8).compute == 0.2);
  CHECK(family.eff(OpKind::expert_ffn, Precision::bf16).compute == 0.2);
  CHECK(family.eff(OpKind::expert_ffn, Precision::fp8).knee == 4.0);
  CHECK(family.eff(OpKind::expert_ffn, Precision::fp8).memory == 0.7);
  // In the user's own layer the precision table still overrides the family.
  const hardware::GpuSpec both =
      parse("[efficiency.expert_ffn]\ncompute = 0.2\n[efficiency.expert_ffn.fp8]\ncompute = 0.3\n");
  CHECK(both.eff(OpKind::expert_ffn, Precision::fp8).compute == 0.3);
  CHECK(both.eff(OpKind::expert_ffn, Precision::bf16).compute == 0.2);
}

TEST_CASE("dense GEMM tiles run in waves over the SMs (hand-computed)") {
  // 100 SMs, 128 x 128 tiles. m = 1024, n = 2048: 8 x 16 = 128 tiles, 2 waves = 200 tile slots:
  // 200 x 128 x 128 / (1024 x 2048) = 1.5625 x the FLOPs' time.
  const hardware::GpuSpec g = parsed_gpu("");
  CHECK(hardware::gemm_wave_factor(g, 1024.0, 2048.0) == Approx(1.5625));
  // m = 1000 (8 row tiles, the last padded), n = 1600 (13 column tiles): 104 tiles, 2 waves:
  // 200 x 16384 / 1.6e6 = 2.048.
  CHECK(hardware::gemm_wave_factor(g, 1000.0, 1600.0) == Approx(2.048));
  // Exactly 2 full waves: 1280 x 1280 = 100 tiles -> one wave: 1; 200 tiles (1280 x 2560): 1.
  CHECK(hardware::gemm_wave_factor(g, 1280.0, 1280.0) == 1.0);
  CHECK(hardware::gemm_wave_factor(g, 1280.0, 2560.0) == Approx(1.0));
  // One wave or less (64 x 4096: 32 tiles): libraries split to fill the SMs, no quantisation.
  CHECK(hardware::gemm_wave_factor(g, 64.0, 4096.0) == 1.0);
  hardware::GpuSpec no_sms = g;
  no_sms.sm_count = 0;
  CHECK(hardware::gemm_wave_factor(no_sms, 1024.0, 2048.0) == 1.0);
  // Priced: 2 x 1024 x 2048 x 4096 FLOPs at 0.75 x 1000 TFLOP/s = 22.906 us, x 1.5625, + 4 us launch.
  const hardware::KernelWork w = gemm(1024.0, 2048.0, 4096.0, hardware::Precision::bf16);
  CHECK(hardware::roofline_cost(g, w).total_ns == Approx(2.0 * 1024 * 2048 * 4096 / 750e3 * 1.5625 + 4000.0));
  // Other tiles: 256 x 128 -> 4 x 16 = 64 tiles, one wave: 1.
  CHECK(hardware::gemm_wave_factor(parsed_gpu("gemm_tile_m = 256\n"), 1024.0, 2048.0) == 1.0);
}

TEST_CASE("a family's floor is the least time of a kernel body, the launch stays on top") {
  const hardware::GpuSpec g = parsed_gpu("[efficiency.attention_decode]\nfloor_us = 10.0\nfixed_us = 1.0\n");
  hardware::KernelWork w;
  w.kind = hardware::OpKind::attention_decode;
  w.bytes = 4000.0 * 0.75 * 2000.0;  // 2 us at 0.75 x 4000 GB/s: under the floor
  CHECK(hardware::roofline_cost(g, w).total_ns == Approx(10000.0 + 5000.0));
  w.launches = 3.0;  // three kernels: three floors (6 us of body is under 30), three launches
  w.bytes *= 3.0;
  CHECK(hardware::roofline_cost(g, w).total_ns == Approx(30000.0 + 15000.0));
  w.launches = 1.0;
  w.bytes = 4000.0 * 0.75 * 25000.0;  // 25 us: above the floor
  CHECK(hardware::roofline_cost(g, w).total_ns == Approx(25000.0 + 5000.0));
  // A slow GPU stretches the floor with the body (it is kernel time, not launch).
  CHECK(hardware::roofline_cost(g, w, 0.5).total_ns == Approx(50000.0 + 5000.0));
  // Other families: no floor.
  w.kind = hardware::OpKind::dense_gemm;
  w.bytes = 4000.0 * 0.85 * 2000.0;
  CHECK(hardware::roofline_cost(g, w).total_ns == Approx(2000.0 + 4000.0));
}

TEST_CASE("attention's compute efficiency falls at small head dims: compute x d / (d + softmax_head_dim)") {
  const hardware::GpuSpec g = parsed_gpu("[efficiency.attention_prefill]\ncompute = 0.8\nsoftmax_head_dim = 48.0\n");
  hardware::KernelWork w;
  w.kind = hardware::OpKind::attention_prefill;
  w.flops = 8e9;  // 10 us at 0.8 x 1000 TFLOP/s
  w.head_dim = 64.0;
  CHECK(hardware::head_dim_factor(48.0, 64.0) == Approx(1.75));
  CHECK(hardware::roofline_cost(g, w).total_ns == Approx(10000.0 * (1.0 + 48.0 / 64.0) + 4000.0));
  w.head_dim = 256.0;
  CHECK(hardware::roofline_cost(g, w).total_ns == Approx(10000.0 * (1.0 + 48.0 / 256.0) + 4000.0));
  w.head_dim = 0.0;  // not given: no softmax term
  CHECK(hardware::roofline_cost(g, w).total_ns == Approx(10000.0 + 4000.0));
}

TEST_CASE("an efficiency names its kernel library, from the registry, for a family the library has") {
  using hardware::KernelLibrary;
  const hardware::GpuSpec g = parsed_gpu(
      "[efficiency.attention_prefill]\nlibrary = \"flash_attn_3\"\n"
      "[efficiency.expert_ffn.fp8]\nlibrary = \"deepgemm\"\n");
  CHECK(g.eff(hardware::OpKind::attention_prefill, hardware::Precision::bf16).library == KernelLibrary::flash_attn_3);
  CHECK(g.eff(hardware::OpKind::expert_ffn, hardware::Precision::fp8).library == KernelLibrary::deepgemm);
  CHECK(g.eff(hardware::OpKind::expert_ffn, hardware::Precision::bf16).library == KernelLibrary::any);
  CHECK_THROWS_WITH(parsed_gpu("[efficiency.dense_gemm]\nlibrary = \"flash_attn_3\"\n"),
                    Catch::Contains("library flash_attn_3 has no dense_gemm kernels"));
  CHECK_THROWS_WITH(parsed_gpu("[efficiency.dense_gemm]\nlibrary = \"magma\"\n"), Catch::Contains("cublas"));
  // Recorded kernel names map to their library by prefix (the public tables' `kernel` column).
  CHECK(hardware::library_of_kernel("deepgemm_m_grouped_fp8_masked") == KernelLibrary::deepgemm);
  CHECK(hardware::library_of_kernel("flash_attn_2") == KernelLibrary::flash_attn_2);
  CHECK(hardware::library_of_kernel("vllm_fused_moe_triton") == KernelLibrary::triton_fused_moe);
  CHECK(hardware::library_of_kernel("torch_scaled_mm") == KernelLibrary::cublas);
  CHECK(hardware::library_of_kernel("sm90_xmma_gemm") == KernelLibrary::any);
  for (const hardware::KernelLibraryInfo& l : hardware::kernel_libraries()) {  // enum order
    CHECK(&hardware::library_info(l.id) == &l);
  }
}
