// SPDX-License-Identifier: Apache-2.0
#include "workloads/arrival_process.hpp"

#include <array>
#include <boost/random/exponential_distribution.hpp>
#include <boost/random/gamma_distribution.hpp>
#include <limits>

#include "workloads/workload_bounds.hpp"

namespace epsim::workloads {

ArrivalConfig parse_arrivals(core::ParamTable& t) {
  using Kind = ArrivalConfig::Kind;
  static constexpr std::array<core::Choice<Kind>, 5> k_kinds{{{"poisson", Kind::poisson},
                                                              {"gamma", Kind::gamma},
                                                              {"onoff", Kind::onoff},
                                                              {"batches", Kind::batches},
                                                              {"replay", Kind::replay}}};
  ArrivalConfig c;
  c.kind = t.choice<Kind>("arrival", Kind::poisson, "arrival process", k_kinds);
  c.rate_rps = t.real("rate_rps", c.rate_rps, "mean arrival rate, requests per second (1e-6 to 1e7)",
                      {k_min_rate_rps, k_max_rate_rps});
  c.cv = t.real("arrival_cv", c.cv, "gamma: coefficient of variation of inter-arrival gaps", {0.01, 100.0});
  c.on_s = t.real("burst_on_s", c.on_s, "onoff: mean ON period, s", core::k_positive_time_s);
  c.off_s = t.real("burst_off_s", c.off_s, "onoff: mean OFF period, s", core::k_positive_time_s);
  c.off_rate_fraction = t.real("burst_off_rate_fraction", 0.0, "onoff: OFF-period rate / ON-period rate", {0.0, 1.0});
  c.batch_size = static_cast<int>(t.integer(
      "batch_size", c.batch_size, "batches: requests arriving together, every batch_size / rate_rps s", {1, 1 << 20}));
  c.replay_file = t.string("replay_file", "",
                           "replay: a request trace, in replay_format (csv: arrival_s[,prompt_tokens,output_tokens] "
                           "per line)");
  c.replay = parse_replay_options(t);
  if (!t.documenting() && c.kind == ArrivalConfig::Kind::replay && c.replay_file.empty()) {
    t.fail("replay_file", "arrival = \"replay\" needs a replay_file");
  }
  return c;
}

ArrivalProcess::ArrivalProcess(const ArrivalConfig& cfg, core::Rng rng) : cfg_(cfg), rng_(rng) {}

double ArrivalProcess::next_onoff_gap_s() {
  // Walk through ON/OFF periods: in each, the next arrival is exponential at the period's rate (memoryless,
  // so a period ending before it simply restarts the draw in the next period).
  const double on_rate = cfg_.on_rate_rps();
  const double off_rate = on_rate * cfg_.off_rate_fraction;
  double gap = 0.0;
  for (;;) {
    if (period_left_s_ < 0.0) {
      period_left_s_ = boost::random::exponential_distribution<double>(1.0 / (on_ ? cfg_.on_s : cfg_.off_s))(rng_);
    }
    const double rate = on_ ? on_rate : off_rate;
    const double draw = rate > 0.0 ? boost::random::exponential_distribution<double>(rate)(rng_)
                                   : std::numeric_limits<double>::infinity();
    if (draw <= period_left_s_) {
      period_left_s_ -= draw;
      return gap + draw;
    }
    gap += period_left_s_;
    period_left_s_ = -1.0;
    on_ = !on_;
  }
}

core::Time ArrivalProcess::next() {
  double gap_s = 0.0;
  switch (cfg_.kind) {
    case ArrivalConfig::Kind::poisson:
    case ArrivalConfig::Kind::replay:
      gap_s = boost::random::exponential_distribution<double>(cfg_.rate_rps)(rng_);
      break;
    case ArrivalConfig::Kind::gamma: {
      // Shape k = 1 / cv^2, scale = 1 / (rate k): mean 1 / rate, CV = cv.
      const double k = 1.0 / (cfg_.cv * cfg_.cv);
      gap_s = boost::random::gamma_distribution<double>(k, 1.0 / (cfg_.rate_rps * k))(rng_);
      break;
    }
    case ArrivalConfig::Kind::onoff:
      gap_s = next_onoff_gap_s();
      break;
    case ArrivalConfig::Kind::batches:
      // Deterministic: the arrivals stream is not drawn from. A batch's requests share its instant.
      if (in_batch_ == cfg_.batch_size) {
        in_batch_ = 0;
        const double gap = static_cast<double>(cfg_.batch_size) / cfg_.rate_rps;
        const core::Time end_ns = core::from_seconds(core::k_max_time_s);
        clock_ns_ = gap >= core::to_seconds(end_ns - clock_ns_) ? end_ns : clock_ns_ + core::from_seconds(gap);
      }
      ++in_batch_;
      return clock_ns_;
  }
  // Simulated time ends at k_max_time_s: a gap beyond it (a rate of 1e-300) saturates there instead of
  // overflowing the nanosecond clock.
  const core::Time end_ns = core::from_seconds(core::k_max_time_s);
  clock_ns_ = gap_s >= core::to_seconds(end_ns - clock_ns_) ? end_ns : clock_ns_ + core::from_seconds(gap_s);
  return clock_ns_;
}

}  // namespace epsim::workloads
