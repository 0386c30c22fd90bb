#include <catch2/catch.hpp>

#include "hardware/gpu_spec.hpp"
#include "hardware/roofline.hpp"
#include "sim/core/params.hpp"

using namespace epsim;

namespace {

hardware::GpuSpec preset(const std::string& name) {
  core::ParamTable t({core::ParamLayer{&hardware::gpu_presets().get(name, "test", "gpu"), name}}, "gpu");
  return hardware::parse_gpu_spec(t);
}

// One Mixtral-8x7B expert (hidden 4096, FFN 14336, BF16) on n tokens, written out by hand:
// FLOPs = 2 * n * 3 * 4096 * 14336; bytes = 3 * 4096 * 14336 * 2 (weights) + n * 4096 * 2 * 2 (in + out).
core::KernelWork mixtral_expert(double n) {
  core::KernelWork w;
  w.kind = core::OpKind::expert_ffn;
  w.precision = core::Precision::bf16;
  w.tokens = n;
  w.flops = 2.0 * n * 3.0 * 4096.0 * 14336.0;
  w.bytes = 3.0 * 4096.0 * 14336.0 * 2.0 + n * 4096.0 * 2.0 * 2.0;
  return w;
}

}  // namespace

TEST_CASE("preset values are the datasheet numbers") {
  const auto h100 = preset("h100");
  REQUIRE(h100.bf16_tflops == 989.0);
  REQUIRE(h100.fp8_tflops == 1979.0);
  REQUIRE(h100.hbm_gbps == 3350.0);
  REQUIRE(h100.memory_gib == 80.0);
  const auto mi300x = preset("mi300x");
  REQUIRE(mi300x.bf16_tflops == 1307.4);
  REQUIRE(mi300x.hbm_gbps == 5300.0);
  REQUIRE(mi300x.memory_gib == 192.0);
}

TEST_CASE("roofline on H100 and MI300X: a memory-bound and a compute-bound token count") {
  // Defaults: 70 % of peak FLOP/s, 80 % of HBM bandwidth, 4 us launch.
  // H100: 989e3 * 0.7 = 692300 FLOP/ns, 3350 * 0.8 = 2680 B/ns. MI300X: 915180 FLOP/ns, 4240 B/ns.
  struct Case {
    const char* gpu;
    double tokens;
    double compute_ns;
    double memory_ns;
    double total_ns;
    hardware::Bound bound;
  };
  const Case cases[] = {
      {"h100", 16, 8142.6326390293, 131561.0746268657, 135561.0746268657, hardware::Bound::memory},
      {"h100", 4096, 2084513.9555915066, 156503.8805970149, 2088513.9555915066, hardware::Bound::compute},
      {"mi300x", 16, 6159.6020192749, 83156.5283018868, 87156.5283018868, hardware::Bound::memory},
      {"mi300x", 4096, 1576858.1169343735, 98922.2641509434, 1580858.1169343735, hardware::Bound::compute},
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

TEST_CASE("FP8 uses the FP8 peak when the GPU has one") {
  auto w = mixtral_expert(4096);
  w.precision = core::Precision::fp8;
  const auto cost = hardware::roofline_cost(preset("h100"), w);
  REQUIRE(cost.compute_ns == Approx(w.flops / (1979e3 * 0.7)));
}

TEST_CASE("a slow GPU stretches the kernel body but not the launch overhead") {
  hardware::RooflineCostModel m(preset("h100"), {1.0, 0.88});
  const auto w = mixtral_expert(16);
  REQUIRE(m.kernel_ns(0, w) == Approx(135561.0746268657));
  REQUIRE(m.kernel_ns(1, w) == Approx(131561.0746268657 / 0.88 + 4000.0));
}

TEST_CASE("tokens per expert round up to the tile, giving latency its staircase") {
  hardware::RooflineCostModel m(preset("h100"), {1.0});
  REQUIRE(m.padded_expert_tokens(0, 0) == 0);
  REQUIRE(m.padded_expert_tokens(0, 1) == 16);
  REQUIRE(m.padded_expert_tokens(0, 16) == 16);
  REQUIRE(m.padded_expert_tokens(0, 17) == 32);
  REQUIRE(m.padded_expert_tokens(0, 4095) == 4096);
}
