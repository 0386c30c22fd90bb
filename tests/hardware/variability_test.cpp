// SPDX-License-Identifier: Apache-2.0
#include <toml++/toml.h>
#include <boost/random/uniform_int_distribution.hpp>
#include <catch2/catch.hpp>
#include <cmath>

#include "core/statistics.hpp"
#include "hardware/gpu_spec.hpp"
#include "hardware/roofline.hpp"
#include "hardware/variability.hpp"

using namespace epsim;
using K = hardware::VariabilityConfig::Kind;

namespace {

core::RunningStats stats_of(const std::vector<double>& v) {
  core::RunningStats s;
  for (double x : v) {
    s.add(x);
  }
  return s;
}

hardware::VariabilityConfig from_toml(std::string_view text, int gpus, double tdp_w = 600.0) {
  const toml::table t = toml::parse(text);
  core::ParamTable p({core::ParamLayer{&t, "test"}}, "variability");
  auto c = hardware::parse_variability(p, gpus, tdp_w);
  p.finish();
  return c;
}

constexpr int k_draws = 100000;

}  // namespace

TEST_CASE("normal and lognormal factors: mean 1 and the configured CV within confidence bounds") {
  for (const K kind : {K::normal, K::lognormal}) {
    hardware::VariabilityConfig c;
    c.kind = kind;
    c.cv = 0.05;
    const auto s = stats_of(hardware::sample_speed_factors(c, k_draws, core::RandomStreams(3)));
    // Sample mean sd = 0.05 / sqrt(1e5) = 1.6e-4 (5 sigma); sample sd relative error ~ 1/sqrt(2n) = 0.2 %.
    REQUIRE(std::abs(s.mean() - 1.0) < 5 * 0.05 / std::sqrt(double{k_draws}));
    REQUIRE(s.stddev() == Approx(0.05).epsilon(0.02));
  }
}

TEST_CASE("the GEM L40 table: published extremes, mean 1, and GEM's Monte Carlo gaps") {
  const auto c = from_toml("preset = \"gem-l40\"\n", 128);
  REQUIRE(c.kind == K::empirical);
  REQUIRE(c.table.size() == 128);
  const auto s = stats_of(c.table);
  REQUIRE(s.min() == Approx(1.0 - 0.1323));
  REQUIRE(s.max() == Approx(1.0 + 0.108));
  REQUIRE(s.mean() == Approx(1.0).margin(1e-9));
  // GEM Fig. 19: the mean slowest/fastest gap of N GPUs drawn from the 128 is 11.9 % at N = 4 and 23.4 %
  // at N = 64. 10,000 Monte Carlo samples each.
  core::Rng rng(19);
  boost::random::uniform_int_distribution<std::size_t> pick(0, 127);
  for (const auto& [n, expected] : {std::pair{4, 0.119}, std::pair{64, 0.234}}) {
    core::RunningStats gap;
    for (int i = 0; i < 10000; ++i) {
      double lo = 10;
      double hi = 0;
      for (int k = 0; k < n; ++k) {
        const double x = c.table[pick(rng)];
        lo = std::min(lo, x);
        hi = std::max(hi, x);
      }
      gap.add(hi / lo - 1.0);
    }
    INFO("N = " << n);
    REQUIRE(gap.mean() == Approx(expected).margin(0.006));
  }
  // Sampling with replacement only returns table values.
  const auto drawn = hardware::sample_speed_factors(c, 1000, core::RandomStreams(2));
  for (double x : drawn) {
    REQUIRE(std::find(c.table.begin(), c.table.end(), x) != c.table.end());
  }
}

TEST_CASE("the Sinha SC22 mixture: 2 % outliers 1.1x to 1.5x slower, a 3 % normal body") {
  const auto c = from_toml("preset = \"sinha-sc22\"\n", 1);
  REQUIRE(c.kind == K::mixture);
  const auto f = hardware::sample_speed_factors(c, k_draws, core::RandomStreams(8));
  int outliers = 0;
  core::RunningStats body;
  for (double x : f) {
    if (x <= 1.0 / 1.1 + 1e-12) {
      ++outliers;
      REQUIRE(x >= 1.0 / 1.5 - 1e-12);
    } else {
      body.add(x);
    }
  }
  // Outliers: binomial(1e5, 0.02), sd 44; the normal body contributes ~0.1 % below 1/1.1 (3 sigma).
  REQUIRE(std::abs(outliers - 2000 - 0.98 * 0.0013 * k_draws) < 5 * 44 + 60);
  REQUIRE(body.mean() == Approx(1.0).margin(0.001));
  REQUIRE(body.stddev() == Approx(0.03).epsilon(0.05));
}

TEST_CASE("GEM's power-cap setups give the intended slow-downs") {
  // GEM Table 2 on 600 W H200s: high = one GPU at 418 W; moderate = 418 / 444 / 480 / 600 W. Its 418 W
  // straggler is "12 % slower"; the default curve (cap / tdp)^0.354 encodes that anchor.
  const auto high = from_toml("kind = \"power_cap\"\npower_caps_w = [418, 600, 600, 600]\n", 4);
  const auto s = hardware::sample_speed_factors(high, 4, core::RandomStreams(1));
  REQUIRE(s[0] == Approx(0.88).margin(0.001));
  REQUIRE(s[1] == 1.0);
  REQUIRE(s[3] == 1.0);
  const auto moderate = from_toml("kind = \"power_cap\"\npower_caps_w = [418, 444, 480, 600]\n", 4);
  const auto m = hardware::sample_speed_factors(moderate, 4, core::RandomStreams(1));
  REQUIRE(m[0] == Approx(std::pow(418.0 / 600.0, 0.354)));
  REQUIRE(m[1] == Approx(std::pow(444.0 / 600.0, 0.354)));
  REQUIRE(m[2] == Approx(std::pow(480.0 / 600.0, 0.354)));
  REQUIRE(m[3] == 1.0);
  REQUIRE(m[0] < m[1]);
  REQUIRE(m[1] < m[2]);
  // An explicit curve is interpolated linearly; caps above TDP run at full speed.
  const auto curve = from_toml(
      "kind = \"power_cap\"\npower_caps_w = [300, 450, 700]\ncurve_power_fraction = [0.5, 1.0]\n"
      "curve_throughput = [0.8, 1.0]\n",
      3);
  const auto cs = hardware::sample_speed_factors(curve, 3, core::RandomStreams(1));
  REQUIRE(cs[0] == Approx(0.8));
  REQUIRE(cs[1] == Approx(0.9));
  REQUIRE(cs[2] == Approx(1.0));
}

TEST_CASE("the stress weight is memory_bound_weight below x_low, 1 above x_high, log-linear between") {
  hardware::StressConfig c;
  REQUIRE(hardware::stress_weight(c, 0.01) == 0.25);
  REQUIRE(hardware::stress_weight(c, 0.1) == Approx(0.25));
  REQUIRE(hardware::stress_weight(c, std::sqrt(0.1)) == Approx(0.625));
  REQUIRE(hardware::stress_weight(c, 1.0) == 1.0);
  REQUIRE(hardware::stress_weight(c, 50.0) == 1.0);
  c.enabled = false;
  REQUIRE(hardware::stress_weight(c, 0.01) == 1.0);
}

TEST_CASE("drift is an OU process with the configured stationary spread, jitter has mean 1 and its CV") {
  const auto gpu = hardware::load_gpu_preset("h100");
  hardware::VariabilityConfig v;
  v.stress.enabled = false;
  v.drift.stddev = 0.02;
  v.drift.time_constant_s = 10.0;
  v.jitter.cv = 0.1;
  const int gpus = 2000;
  hardware::RooflineCostModel m(gpu, std::vector<double>(gpus, 1.0), v, core::RandomStreams(5));
  // After many time constants every GPU's deviation is a draw from N(0, 0.02^2).
  m.advance_to(core::from_seconds(1000.0));
  core::RunningStats speeds;
  for (int g = 0; g < gpus; ++g) {
    speeds.add(m.speed(g));
  }
  REQUIRE(speeds.mean() == Approx(1.0).margin(5 * 0.02 / std::sqrt(double{gpus})));
  REQUIRE(speeds.stddev() == Approx(0.02).epsilon(0.1));
  // Over a short interval the process barely moves: correlation exp(-dt / tau).
  const double before = m.speed(0);
  m.advance_to(core::from_seconds(1000.001));
  REQUIRE(std::abs(m.speed(0) - before) < 0.01);
  core::RunningStats j;
  for (int i = 0; i < k_draws; ++i) {
    j.add(m.jitter(i % gpus));
  }
  REQUIRE(j.mean() == Approx(1.0).margin(5 * 0.1 / std::sqrt(double{k_draws})));
  REQUIRE(j.stddev() == Approx(0.1).epsilon(0.03));
}
