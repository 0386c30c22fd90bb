// SPDX-License-Identifier: Apache-2.0
#include <toml++/toml.h>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "hardware/dvfs.hpp"
#include "hardware/gpu_spec.hpp"
#include "hardware/roofline.hpp"
#include "hardware/variability.hpp"

using namespace epsim;
using Catch::Detail::Approx;

namespace {

hardware::DvfsConfig on() {
  hardware::DvfsConfig c;
  c.enabled = true;
  return c;
}

constexpr double k_ms = 1e6;  // ns

}  // namespace

TEST_CASE("dvfs clock: cold up to h = full_duty_clock^alpha, then (h / u)^(1 / alpha)") {
  const hardware::DvfsConfig c = on();
  const double h = std::pow(0.84, 2.8);  // 0.614
  CHECK(hardware::dvfs_clock(c, 0.0) == 1.0);
  CHECK(hardware::dvfs_clock(c, h) == 1.0);
  CHECK(hardware::dvfs_clock(c, 1.0) == Approx(0.84).epsilon(1e-12));
  CHECK(hardware::dvfs_clock(c, 0.8) == Approx(std::pow(h / 0.8, 1.0 / 2.8)).epsilon(1e-12));
  // Power at the clock: u x clock^alpha stays at h above the onset.
  for (const double u : {0.65, 0.7, 0.9, 1.0}) {
    CHECK(u * std::pow(hardware::dvfs_clock(c, u), 2.8) == Approx(h).epsilon(1e-12));
  }
}

TEST_CASE("dvfs duty: busy and idle spans follow their own time constants exactly") {
  const hardware::DvfsConfig c = on();  // rise 31 ms, fall 210 ms
  // Busy throughout: u = 1 - (1 - u0) e^(-t / rise); idle: u = u0 e^(-t / fall).
  CHECK(hardware::dvfs_duty_after(c, 0.2, 1.0, 31 * k_ms) == Approx(1.0 - 0.8 * std::exp(-1.0)).epsilon(1e-12));
  CHECK(hardware::dvfs_duty_after(c, 0.9, 0.0, 105 * k_ms) == Approx(0.9 * std::exp(-0.5)).epsilon(1e-12));
  // Busy a share b: the fixed point of b (1 - u) / rise = (1 - b) u / fall.
  const double b = 0.4;
  const double fixed = (b / 31.0) / (b / 31.0 + (1.0 - b) / 210.0);
  CHECK(hardware::dvfs_duty_after(c, 0.0, b, 1e5 * k_ms) == Approx(fixed).epsilon(1e-12));
  CHECK(hardware::dvfs_duty_after(c, fixed, b, 7 * k_ms) == Approx(fixed).epsilon(1e-12));
  // Two halves of a span give the span (the solution is exact, not a step of a scheme).
  const double whole = hardware::dvfs_duty_after(c, 0.3, 0.7, 40 * k_ms);
  const double halves = hardware::dvfs_duty_after(c, hardware::dvfs_duty_after(c, 0.3, 0.7, 20 * k_ms), 0.7, 20 * k_ms);
  CHECK(halves == Approx(whole).epsilon(1e-12));
  // No time, no change.
  CHECK(hardware::dvfs_duty_after(c, 0.3, 1.0, 0.0) == 0.3);
}

TEST_CASE("dvfs limiter: a GPU's clock follows its own steps and cools while it idles") {
  hardware::DvfsConfig c = on();
  hardware::DvfsLimiter lim(c, 4);
  for (int g = 0; g < 4; ++g) {
    CHECK(lim.clock(g) == 1.0);   // a cold cluster
    CHECK(lim.factor(g) == 1.0);  // reference duty 0: the cost model's speeds are cold clocks
  }
  // GPUs 0-1 (one group) busy 100 % and 50 % of a 200 ms step at full power; GPUs 2-3 untouched.
  const std::vector<double> busy = {200 * k_ms, 100 * k_ms};
  lim.begin_step(0, 2, 0);
  lim.end_step(0, busy.data(), 2, 0, static_cast<core::Time>(200 * k_ms), 1.0);
  const double u0 = 1.0 - std::exp(-200.0 / 31.0);
  CHECK(lim.duty(0) == Approx(u0).epsilon(1e-12));
  CHECK(lim.duty(1) == Approx(hardware::dvfs_duty_after(c, 0.0, 0.5, 200 * k_ms)).epsilon(1e-12));
  CHECK(lim.clock(0) == Approx(hardware::dvfs_clock(c, u0)).epsilon(1e-12));
  CHECK(lim.clock(0) < lim.clock(1));
  CHECK(lim.duty(2) == 0.0);
  CHECK(lim.clock(3) == 1.0);
  // Idle 100 ms, then the next step starts: the duty decays over the gap only.
  lim.begin_step(0, 2, static_cast<core::Time>(300 * k_ms));
  CHECK(lim.duty(0) == Approx(u0 * std::exp(-100.0 / 210.0)).epsilon(1e-12));
  // A power weight scales the busy share: memory-bound steps (weight 0.25) at 100 % busy hold the duty at 0.25's
  // fixed point, below the onset h = 0.614.
  hardware::DvfsLimiter cool(c, 1);
  const std::vector<double> all = {1000 * k_ms};
  cool.end_step(0, all.data(), 1, 0, static_cast<core::Time>(1000 * k_ms), 0.25);
  const double fixed = (0.25 / 31.0) / (0.25 / 31.0 + 0.75 / 210.0);
  CHECK(cool.duty(0) == Approx(fixed).epsilon(1e-3));
  CHECK(cool.clock(0) == Approx(hardware::dvfs_clock(c, cool.duty(0))).epsilon(1e-12));
  // With the sustained clock as reference the factor is the clock over 0.84.
  c.reference_duty = 1.0;
  hardware::DvfsLimiter sustained(c, 1);
  CHECK(sustained.factor(0) == Approx(1.0 / 0.84).epsilon(1e-12));
}

TEST_CASE("dvfs in the roofline: a busy GPU's compute-bound kernels slow down by its clock") {
  const toml::table t = toml::parse("[dvfs]\nenabled = true\n");
  core::ParamTable p({core::ParamLayer{&t, "test"}}, "variability");
  const hardware::VariabilityConfig v = hardware::parse_variability(p, 2, 700.0);
  p.finish();
  REQUIRE(v.dvfs.enabled);
  CHECK(v.dvfs.rise_ms == 31.0);
  const hardware::GpuSpec gpu = hardware::load_gpu_preset("h200");
  hardware::RooflineCostModel cost(gpu, {1.0, 1.0}, v, core::RandomStreams(1));
  CHECK(cost.power_limited());
  CHECK(cost.price_class(0) == -1);  // speeds change step by step: no memoised prices
  hardware::KernelWork gemm;         // an 8,192-cube BF16 GEMM, as the measurement ran
  gemm.flops = 2.0 * 8192 * 8192 * 8192;
  gemm.bytes = 3.0 * 8192 * 8192 * 2;
  const double cold_ns = cost.kernel_ns(0, gemm);
  CHECK(cost.power_weight(0, gemm) == 1.0);
  // GPU 0 busy a whole second, GPU 1 idle: GPU 0 runs at its throttled clock, GPU 1 cold.
  const std::vector<double> busy = {1e9, 0.0};
  cost.begin_step(0, 2, 0);
  cost.end_step(0, busy, 0, 1'000'000'000, 1.0);
  const double u = 1.0 - std::exp(-1000.0 / 31.0);
  CHECK(cost.power_clock(0) == Approx(hardware::dvfs_clock(v.dvfs, u)).epsilon(1e-12));
  CHECK(cost.power_clock(1) == 1.0);
  CHECK(cost.kernel_ns(0, gemm) == Approx(hardware::roofline_cost(gpu, gemm, cost.power_clock(0)).total_ns));
  CHECK(cost.kernel_ns(1, gemm) == cold_ns);
  CHECK(cost.kernel_ns(0, gemm) > 1.15 * cold_ns);
}
