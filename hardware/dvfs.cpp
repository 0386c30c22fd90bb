// SPDX-License-Identifier: Apache-2.0
#include "hardware/dvfs.hpp"

#include <algorithm>
#include <cmath>

namespace epsim::hardware {

DvfsConfig parse_dvfs(core::ParamTable& t) {
  DvfsConfig c;
  auto d = t.table("dvfs", "power-limited clocks that follow each GPU's busy share (hardware/dvfs.hpp)");
  c.enabled = d.boolean("enabled", false, "clock each GPU from its recent busy share under a power cap");
  c.rise_ms =
      d.real("rise_ms", c.rise_ms, "time constant of the power duty while busy, ms (H200: 31)", {0.0, 1e6, true});
  c.fall_ms =
      d.real("fall_ms", c.fall_ms, "time constant of the power duty while idle, ms (H200: 210)", {0.0, 1e6, true});
  c.full_duty_clock = d.real("full_duty_clock", c.full_duty_clock,
                             "clock under continuous compute over the cold clock (H200: 0.84)", {0.0, 1.0, true});
  c.power_exponent =
      d.real("power_exponent", c.power_exponent, "alpha: dynamic power ~ clock^alpha (GEM's Table 2: 2.8)", {0.5, 6.0});
  c.reference_duty =
      d.real("reference_duty", c.reference_duty,
             "power duty at which the cost model's speeds hold (0: cold clocks; 1: sustained)", core::k_unit_interval);
  d.finish();
  return c;
}

double dvfs_clock(const DvfsConfig& c, double duty) {
  const double h = std::pow(c.full_duty_clock, c.power_exponent);
  return duty <= h ? 1.0 : std::pow(h / duty, 1.0 / c.power_exponent);
}

double dvfs_duty_after(const DvfsConfig& c, double duty, double busy_share, double span_ns) {
  if (!(span_ns > 0.0)) {
    return duty;
  }
  const double b = std::clamp(busy_share, 0.0, 1.0);
  // du/dt = b / rise - k u with k = b / rise + (1 - b) / fall: u relaxes to b / (rise k) at rate k.
  const double rise_ns = c.rise_ms * 1e6;
  const double fall_ns = c.fall_ms * 1e6;
  const double k = b / rise_ns + (1.0 - b) / fall_ns;
  const double target = b / rise_ns / k;
  return target + (duty - target) * std::exp(-k * span_ns);
}

DvfsLimiter::DvfsLimiter(const DvfsConfig& c, int gpus)
    : c_(c),
      reference_clock_(dvfs_clock(c, c.reference_duty)),
      duty_(static_cast<std::size_t>(gpus), 0.0),
      factor_(static_cast<std::size_t>(gpus), 1.0 / reference_clock_),
      at_(static_cast<std::size_t>(gpus), 0) {}

void DvfsLimiter::set_duty(std::size_t g, double duty) {
  duty_[g] = duty;
  factor_[g] = dvfs_clock(c_, duty) / reference_clock_;
}

void DvfsLimiter::begin_step(int first, int count, core::Time start) {
  for (std::size_t g = static_cast<std::size_t>(first);
       g < static_cast<std::size_t>(first) + static_cast<std::size_t>(count); ++g) {
    if (start > at_[g]) {
      set_duty(g, dvfs_duty_after(c_, duty_[g], 0.0, static_cast<double>(start - at_[g])));
      at_[g] = start;
    }
  }
}

void DvfsLimiter::end_step(int first, const double* busy_ns, int count, core::Time start, core::Time end,
                           double power_weight) {
  const double span_ns = static_cast<double>(end - start);
  if (!(span_ns > 0.0)) {
    return;
  }
  for (int i = 0; i < count; ++i) {
    const std::size_t g = static_cast<std::size_t>(first) + static_cast<std::size_t>(i);
    set_duty(g, dvfs_duty_after(c_, duty_[g], power_weight * busy_ns[i] / span_ns, span_ns));
    at_[g] = std::max(at_[g], end);
  }
}

}  // namespace epsim::hardware
