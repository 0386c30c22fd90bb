// SPDX-License-Identifier: Apache-2.0
#pragma once
// A GPU's power limiter as a clock that follows its recent busy share (ViBE's stress feedback: a GPU given
// more compute draws more power, reaches its limit and clocks down; one given less idles at barriers,
// cools and speeds up). The limiter sees a *power duty* u in [0, 1]: an attack/release filter of the
// GPU's busy indicator, rising with time constant rise_ms while it runs kernels and falling with
// fall_ms while it idles. Over a span busy a share b of the time (kernels and waits interleave far faster
// than either constant), u obeys du/dt = b (1 - u) / rise - (1 - b) u / fall, solved exactly per span.
// Busy time counts at the power its work draws (end_step's power_weight: memory-bound work draws less).
// The clock is the cold clock while u <= h and (h / u)^(1 / alpha) above: dynamic power grows as
// clock^alpha, and the limiter holds u x clock^alpha at h, the duty the power cap sustains at full clock.
// h follows from the clock measured under continuous load: h = full_duty_clock^alpha.
// Sources (docs/reproductions.md, "Stress-dependent variability"): rise, fall and full_duty_clock from
// one H200 (tools/power/, data/power/: rise fitted on the transient after idle, fall on FP8's bursts);
// alpha = 2.8 from GEM's Table 2 (418 of 600 W for 12 % less throughput).
#include <vector>

#include "core/params.hpp"
#include "core/time.hpp"

namespace epsim::hardware {

struct DvfsConfig {
  bool enabled = false;
  double rise_ms = 31.0;          ///< time constant of the duty while the GPU runs kernels
  double fall_ms = 210.0;         ///< ... and while it idles
  double full_duty_clock = 0.84;  ///< clock under continuous compute-bound load over the cold clock
  double power_exponent = 2.8;    ///< alpha: dynamic power ~ clock^alpha
  double reference_duty = 0.0;    ///< the duty at which the cost model's speeds hold (0: cold clocks)
};

/// Parses [cluster.variability.dvfs].
DvfsConfig parse_dvfs(core::ParamTable& t);
/// The clock at power duty `duty`, over the cold clock: min(1, (h / duty)^(1 / alpha)).
double dvfs_clock(const DvfsConfig& c, double duty);
/// The duty after `span_ns` in which the GPU was busy a share `busy_share` of the time, from `duty`.
double dvfs_duty_after(const DvfsConfig& c, double duty, double busy_share, double span_ns);

/// Every GPU's power duty and the speed factor it gives, dvfs_clock(duty) / dvfs_clock(reference_duty).
/// GPUs start cold (duty 0: the cluster was idle). A GPU's duty is brought forward only by its own steps
/// (idle until one starts, then busy a share of it), so groups that step at different times keep their own
/// clocks. Memory stays flat: a duty, a time and a factor per GPU. The clock is held for a step (a step is
/// about one response time long, and its kernels are priced when it starts).
class DvfsLimiter {
 public:
  DvfsLimiter(const DvfsConfig& c, int gpus);
  /// GPUs [first, first + count) start a step at `start`: they idled since their last step.
  void begin_step(int first, int count, core::Time start);
  /// They ran it until `end`, GPU first + i busy busy_ns[i] of it at `power_weight` of full power (its
  /// power duty input is busy share x power_weight).
  void end_step(int first, const double* busy_ns, int count, core::Time start, core::Time end, double power_weight);
  /// GPU `g`'s speed factor now (1 at the reference duty).
  double factor(int g) const { return factor_[static_cast<std::size_t>(g)]; }
  double duty(int g) const { return duty_[static_cast<std::size_t>(g)]; }
  /// GPU `g`'s clock over its cold clock now.
  double clock(int g) const { return factor(g) * reference_clock_; }

 private:
  void set_duty(std::size_t g, double duty);

  DvfsConfig c_;
  double reference_clock_;
  std::vector<double> duty_, factor_;
  std::vector<core::Time> at_;  // the time each GPU's duty holds at
};

}  // namespace epsim::hardware
