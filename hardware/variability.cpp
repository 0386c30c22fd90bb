// SPDX-License-Identifier: Apache-2.0
#include "hardware/variability.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <boost/random/bernoulli_distribution.hpp>
#include <boost/random/lognormal_distribution.hpp>
#include <boost/random/normal_distribution.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <boost/random/uniform_real_distribution.hpp>
#include <cmath>
#include <span>

#include "core/error.hpp"
#include "core/presets.hpp"

namespace epsim::hardware {

std::span<const core::EmbeddedFile> embedded_variability();

namespace {

using Kind = VariabilityConfig::Kind;
constexpr std::array<core::Choice<Kind>, 7> k_kinds{{{"none", Kind::none},
                                                     {"explicit", Kind::explicit_list},
                                                     {"normal", Kind::normal},
                                                     {"lognormal", Kind::lognormal},
                                                     {"empirical", Kind::empirical},
                                                     {"mixture", Kind::mixture},
                                                     {"power_cap", Kind::power_cap}}};
constexpr double k_min_speed = 0.05;  // a normal draw below this would be a broken GPU, not a slow one

const core::PresetCatalog& presets() {
  static const core::PresetCatalog catalog("variability", embedded_variability());
  return catalog;
}

}  // namespace

std::vector<std::string> variability_preset_names() {
  return presets().names();
}

double stress_weight(const StressConfig& c, double x) {
  if (!c.enabled || x >= c.x_high) {
    return 1.0;
  }
  if (x <= c.x_low) {
    return c.memory_bound_weight;
  }
  const double t = std::log(x / c.x_low) / std::log(c.x_high / c.x_low);
  return c.memory_bound_weight + (1.0 - c.memory_bound_weight) * t;
}

double power_cap_speed(const VariabilityConfig& c, double cap_w) {
  const double f = std::min(cap_w / c.tdp_w, 1.0);
  if (c.curve_power_fraction.empty()) {
    return std::pow(f, c.power_exponent);
  }
  const auto& xs = c.curve_power_fraction;
  const auto& ys = c.curve_throughput;
  if (f <= xs.front()) {
    return ys.front();
  }
  if (f >= xs.back()) {
    return ys.back();
  }
  const auto hi = static_cast<std::size_t>(std::upper_bound(xs.begin(), xs.end(), f) - xs.begin());
  const double t = (f - xs[hi - 1]) / (xs[hi] - xs[hi - 1]);
  return ys[hi - 1] + t * (ys[hi] - ys[hi - 1]);
}

VariabilityConfig parse_variability(core::ParamTable& t, int gpus, double tdp_w) {
  VariabilityConfig c;
  const std::string preset =
      t.string("preset", "", "variability preset: " + fmt::format("{}", fmt::join(presets().names(), ", ")));
  if (!preset.empty()) {
    c.table_name = preset;
    t.add_layer(core::preset_layer(t, "preset", presets(), preset));
  }
  c.kind = t.choice<Kind>("kind", Kind::none, "where static speed factors come from", k_kinds);
  c.factors = t.real_list("factors", "explicit: speed factor of each GPU", {0.0, 10.0, true});
  c.cv = t.real("cv", c.cv, "normal/lognormal/mixture: standard deviation of the factor (mean 1)", {0.0, 1.0});
  c.table = t.real_list("table", "empirical: speed factors sampled with replacement", {0.0, 10.0, true});
  c.outlier_probability =
      t.real("outlier_probability", 0.0, "mixture: chance a GPU is an outlier", core::k_unit_interval);
  c.outlier_slowdown_min =
      t.real("outlier_slowdown_min", c.outlier_slowdown_min, "mixture: least outlier slowdown (x time)", {1.0, 100.0});
  c.outlier_slowdown_max = t.real("outlier_slowdown_max", c.outlier_slowdown_max,
                                  "mixture: largest outlier slowdown (x time)", {1.0, 100.0});
  c.power_caps_w = t.real_list("power_caps_w", "power_cap: cap of each GPU in W", core::k_positive);
  c.tdp_w = t.real("tdp_w", tdp_w, "power_cap: uncapped power in W (default: the GPU's TDP)", core::k_non_negative);
  c.power_exponent =
      t.real("power_exponent", c.power_exponent, "power_cap: throughput = (cap / tdp)^exponent", {0.0, 4.0});
  c.curve_power_fraction =
      t.real_list("curve_power_fraction", "power_cap: curve points, cap / tdp (increasing)", {0.0, 1.0, true});
  c.curve_throughput =
      t.real_list("curve_throughput", "power_cap: throughput fraction at each curve point", {0.0, 1.0, true});

  auto stress = t.table("stress", "stress dependence (ViBE): how much of a GPU's deviation a kernel shows");
  c.stress.enabled = stress.boolean("enabled", true, "blend variability by arithmetic intensity");
  c.stress.memory_bound_weight =
      stress.real("memory_bound_weight", c.stress.memory_bound_weight,
                  "share of the deviation shown by memory-bound kernels", core::k_unit_interval);
  c.stress.x_low = stress.real("x_low", c.stress.x_low,
                               "intensity / ridge point at or below which w = memory_bound_weight", core::k_positive);
  c.stress.x_high =
      stress.real("x_high", c.stress.x_high, "intensity / ridge point at or above which w = 1", core::k_positive);
  stress.finish();
  auto drift = t.table("drift", "slow Ornstein-Uhlenbeck drift of each GPU's speed");
  c.drift.stddev = drift.real("stddev", 0.0, "stationary std of the relative drift (0 = none)", {0.0, 0.5});
  c.drift.time_constant_s =
      drift.real("time_constant_s", c.drift.time_constant_s, "mean-reversion time, s", core::k_positive_time_s);
  drift.finish();
  auto jitter = t.table("jitter", "per-kernel multiplicative noise");
  c.jitter.cv = jitter.real("cv", 0.0, "coefficient of variation of each kernel's duration (0 = none)", {0.0, 1.0});
  jitter.finish();
  c.dvfs = parse_dvfs(t);

  if (t.documenting()) {
    return c;
  }
  if (!(c.stress.x_low < c.stress.x_high)) {
    t.fail("stress", "x_low must be < x_high");
  }
  using K = VariabilityConfig::Kind;
  if (c.kind == K::explicit_list && static_cast<int>(c.factors.size()) != gpus) {
    t.fail("factors", fmt::format("expected one factor per GPU ({}), got {}", gpus, c.factors.size()));
  }
  if (c.kind == K::empirical && c.table.empty()) {
    t.fail("table", "empirical variability needs a non-empty table (or preset = \"gem-l40\")");
  }
  if (c.kind == K::mixture && c.outlier_slowdown_min > c.outlier_slowdown_max) {
    t.fail("outlier_slowdown_min", "must be <= outlier_slowdown_max");
  }
  if (c.kind == K::power_cap) {
    if (static_cast<int>(c.power_caps_w.size()) != gpus) {
      t.fail("power_caps_w", fmt::format("expected one cap per GPU ({}), got {}", gpus, c.power_caps_w.size()));
    }
    if (!(c.tdp_w > 0.0)) {
      t.fail("tdp_w", "power caps need the GPU's TDP (> 0)");
    }
    if (c.curve_power_fraction.size() != c.curve_throughput.size()) {
      t.fail("curve_throughput", "needs as many points as curve_power_fraction");
    }
    if (!std::is_sorted(c.curve_power_fraction.begin(), c.curve_power_fraction.end())) {
      t.fail("curve_power_fraction", "must be increasing");
    }
  }
  return c;
}

std::vector<double> sample_speed_factors(const VariabilityConfig& c, int gpus, const core::RandomStreams& streams) {
  core::Rng rng = streams.stream("variability");
  std::vector<double> s(static_cast<std::size_t>(gpus), 1.0);
  using K = VariabilityConfig::Kind;
  switch (c.kind) {
    case K::none:
      break;
    case K::explicit_list:
      s = c.factors;
      break;
    case K::normal: {
      boost::random::normal_distribution<double> d(1.0, c.cv);
      for (double& x : s) {
        x = std::max(d(rng), k_min_speed);
      }
      break;
    }
    case K::lognormal: {
      const double sigma2 = std::log1p(c.cv * c.cv);
      boost::random::lognormal_distribution<double> d(-sigma2 / 2.0, std::sqrt(sigma2));
      for (double& x : s) {
        x = d(rng);
      }
      break;
    }
    case K::empirical: {
      boost::random::uniform_int_distribution<std::size_t> pick(0, c.table.size() - 1);
      for (double& x : s) {
        x = c.table[pick(rng)];
      }
      break;
    }
    case K::mixture: {
      boost::random::normal_distribution<double> body(1.0, c.cv);
      boost::random::bernoulli_distribution<double> outlier(c.outlier_probability);
      boost::random::uniform_real_distribution<double> slowdown(c.outlier_slowdown_min, c.outlier_slowdown_max);
      for (double& x : s) {
        // Every GPU draws all three, so one GPU's outcome never shifts the next GPU's draws.
        const double b = std::max(body(rng), k_min_speed);
        const bool out = outlier(rng);
        const double slow = slowdown(rng);
        x = out ? 1.0 / slow : b;
      }
      break;
    }
    case K::power_cap:
      for (std::size_t g = 0; g < s.size(); ++g) {
        s[g] = power_cap_speed(c, c.power_caps_w[g]);
      }
      break;
  }
  return s;
}

}  // namespace epsim::hardware
