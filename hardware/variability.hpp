// SPDX-License-Identifier: Apache-2.0
#pragma once
// GPU-to-GPU speed variability. A GPU's *speed factor* s is its throughput relative to nominal
// (0.88 = 12 % slow). Static factors come from one of several sources; at run time each kernel sees
//   s_eff = 1 + (s(t) - 1) * w(x)
// where x is the kernel's arithmetic intensity over the GPU's ridge point and w the stress weight:
// variability is fully expressed by compute-bound, high-power kernels and fades toward memory-bound
// ones (ViBE, Section 3: clocks diverge near TDP in prefill/MoE, stay uniform in decode). s(t) may drift
// slowly (an Ornstein-Uhlenbeck process per GPU), kernels may jitter (multiplicative lognormal), and a
// power limiter may clock each GPU from its recent busy share (dvfs.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include "core/params.hpp"
#include "core/random_streams.hpp"
#include "hardware/dvfs.hpp"

namespace epsim::hardware {

/// w(x): `memory_bound_weight` for x <= x_low, 1 for x >= x_high, linear in log x between.
struct StressConfig {
  bool enabled = true;
  double memory_bound_weight = 0.25;  ///< share of the deviation a fully memory-bound kernel shows
  double x_low = 0.1;                 ///< intensity / ridge at and below which w = memory_bound_weight
  double x_high = 1.0;                ///< intensity / ridge at and above which w = 1 (compute-bound)
};
double stress_weight(const StressConfig& c, double intensity_over_ridge);

struct DriftConfig {
  double stddev = 0.0;             ///< stationary std of the relative drift (0 = no drift)
  double time_constant_s = 600.0;  ///< mean-reversion time of the OU process
};

struct JitterConfig {
  double cv = 0.0;  ///< coefficient of variation of the per-kernel multiplicative noise (0 = none)
};

struct VariabilityConfig {
  enum class Kind : std::uint8_t { none, explicit_list, normal, lognormal, empirical, mixture, power_cap };
  Kind kind = Kind::none;
  std::vector<double> factors;        ///< explicit_list: one per GPU
  double cv = 0.05;                   ///< normal / lognormal / mixture base: std of the factor (mean 1)
  std::vector<double> table;          ///< empirical: values sampled with replacement
  std::string table_name;             ///< empirical: preset the table came from ("" = inline)
  double outlier_probability = 0.0;   ///< mixture: chance a GPU is an outlier
  double outlier_slowdown_min = 1.2;  ///< mixture: outliers take this ...
  double outlier_slowdown_max = 1.5;  ///< ... to this many times longer (uniform)
  std::vector<double> power_caps_w;   ///< power_cap: one per GPU
  double tdp_w = 0.0;                 ///< power_cap: uncapped power (default: the GPU's TDP)
  /// power_cap: throughput = (cap / tdp)^exponent unless a curve is given. The default exponent 0.354
  /// puts GEM's 418 W of 600 W at 0.88 (its "12 % slower" straggler, Section 4.2 / Table 2).
  double power_exponent = 0.354;
  std::vector<double> curve_power_fraction;  ///< power_cap: explicit curve, increasing cap / tdp ...
  std::vector<double> curve_throughput;      ///< ... and throughput there (linear interpolation)
  StressConfig stress;
  DriftConfig drift;
  JitterConfig jitter;
  DvfsConfig dvfs;
};

/// Parses [cluster.variability]; `gpus` sizes per-GPU lists, `tdp_w` is the GPU's TDP.
VariabilityConfig parse_variability(core::ParamTable& t, int gpus, double tdp_w);
/// Throughput fraction of a GPU capped at `cap_w` (1 at or above TDP).
double power_cap_speed(const VariabilityConfig& c, double cap_w);
/// Static speed factors of `gpus` GPUs, drawn from the "variability" stream.
std::vector<double> sample_speed_factors(const VariabilityConfig& c, int gpus, const core::RandomStreams& streams);
/// Shipped empirical tables (presets/variability/*.toml): "gem-l40", "sinha-sc22".
std::vector<std::string> variability_preset_names();

}  // namespace epsim::hardware
