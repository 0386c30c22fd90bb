#include <catch2/catch.hpp>

#include "core/params.hpp"
#include "hardware/gpu_spec.hpp"
#include "hardware/roofline.hpp"

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
  for (const char* name : {"a100", "h100", "h200", "b200", "gb200", "mi300x", "mi325x", "l40", "rtx4090", "rtx3090"}) {
    INFO(name);
    REQUIRE(hardware::gpu_presets().contains(name));
    REQUIRE(preset(name).tdp_w > 0.0);
  }
}

TEST_CASE("roofline on H100 and MI300X: a memory-bound and a compute-bound token count") {
  // Expert FFN family defaults: 65 % of peak FLOP/s, 80 % of memory bandwidth; 4 us launch.
  // H100: 989e3 * 0.65 = 642850 FLOP/ns, 3350 * 0.8 = 2680 B/ns. MI300X: 849810 FLOP/ns, 4240 B/ns.
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
      {"mi300x", 16, 6633.4175592191195, 83156.52830188679, 87156.52830188679, hardware::Bound::memory},
      {"mi300x", 4096, 1698154.8951600946, 98922.2641509434, 1702154.8951600946, hardware::Bound::compute},
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
  g.efficiency[0].knee = 2.0;
  g.efficiency[0].fixed_us = 3.0;
  CHECK(epsim::hardware::roofline_cost(g, w).total_ns ==
        Approx(std::sqrt(compute_ns * compute_ns + memory_ns * memory_ns) + (4.0 + 3.0) * 1e3));
  // Work standing for several kernels pays the launch and fixed cost once per kernel, the body once.
  w.launches = 5.0;
  CHECK(epsim::hardware::roofline_cost(g, w).total_ns ==
        Approx(std::sqrt(compute_ns * compute_ns + memory_ns * memory_ns) + 5.0 * (4.0 + 3.0) * 1e3));
}
