// SPDX-License-Identifier: Apache-2.0
#pragma once
// Arrival processes (inter-arrival gaps): Poisson; Gamma with a coefficient of variation (burstiness:
// CV 1 is Poisson, above 1 burstier, below more regular); on/off bursts (a two-state modulated Poisson
// process: exponential ON and OFF periods with their own rates, the ON rate set so the long-run mean is
// the configured rate); batches (`batch_size` requests at the same instant, one batch every
// batch_size / rate: offline batch work, DIRECTOR's setting). Replay of a request trace: request_trace.hpp.
#include <cstdint>

#include "core/params.hpp"
#include "core/random_streams.hpp"
#include "core/time.hpp"
#include "workloads/request_trace.hpp"

namespace epsim::workloads {

struct ArrivalConfig {
  enum class Kind : std::uint8_t { poisson, gamma, onoff, batches, replay };
  Kind kind = Kind::poisson;
  double rate_rps = 4.0;           ///< long-run mean arrival rate
  double cv = 1.0;                 ///< gamma: coefficient of variation of the gaps
  double on_s = 5.0;               ///< onoff: mean ON period
  double off_s = 5.0;              ///< onoff: mean OFF period
  double off_rate_fraction = 0.0;  ///< onoff: OFF rate / ON rate
  int batch_size = 8;              ///< batches: requests per batch (the first batch arrives at t = 0)
  std::string replay_file;         ///< replay: a request trace (replay.format says which kind)
  ReplayOptions replay;            ///< replay: the file's format, window, speed-up (request_trace.hpp)

  /// onoff: the rate during ON periods that gives `rate_rps` on average.
  double on_rate_rps() const { return rate_rps * (on_s + off_s) / (on_s + off_rate_fraction * off_s); }
};

/// Reads the arrival keys of [workload] (process, rate_rps, cv, on/off, replay_file and replay_*).
ArrivalConfig parse_arrivals(core::ParamTable& t);

/// Generates arrival times one at a time from the "arrivals" random stream.
class ArrivalProcess {
 public:
  ArrivalProcess(const ArrivalConfig& cfg, core::Rng rng);
  /// The next arrival time (absolute, ns).
  core::Time next();

 private:
  double next_onoff_gap_s();

  ArrivalConfig cfg_;
  core::Rng rng_;
  core::Time clock_ns_ = 0;
  // onoff state: whether ON, and the time left in the current period.
  bool on_ = true;
  double period_left_s_ = -1.0;
  // batches: requests of the current batch handed out so far.
  int in_batch_ = 0;
};

}  // namespace epsim::workloads
