#pragma once
// The highest arrival rate whose SLO attainment stays >= a target (ViBE / DistServe's "max sustainable
// rate"). By default every probe measures steady state: arrivals for a duration long enough for the
// requested number of measured requests, the first and last part of it excluded (warm-up, cool-down),
// and the simulation stopped once every measured request's verdict is known (a request arriving by the
// window's end that has not finished by arrival + TTFT target + TPOT target x (longest output - 1) has
// missed), so an overloaded probe does not pay for draining its backlog. The search brackets (doubling
// or halving from the config's rate) then bisects; or, with `rates`, probes a fixed grid. Replication r
// adds r to the workload's seed (replication.hpp) and searches again: the answer is the mean of the
// replications' answers with a Student-t interval. Probes of one replication differ only by their rate.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/confidence.hpp"
#include "experiments/assembly/experiment_config.hpp"
#include "sim/metrics.hpp"

namespace epsim::experiments {

struct SloProbe {
  double rate_rps = 0.0;
  int replication = 0;
  serving::RunSummary summary;
  /// Attainment of the measured requests arriving in the first and the second half of the window: a
  /// second half clearly worse means the queue was still growing (not yet steady).
  double first_half_attainment = 0.0;
  double second_half_attainment = 0.0;
  double window_scale = 1.0;        ///< the window, as a multiple of the automatic one (grown until settled)
  std::int64_t backlog_growth = 0;  ///< requests in the system at the window's end minus at its start
};

struct SloSearchOptions {
  double target = 0.9;      ///< attainment to sustain
  double tolerance = 0.02;  ///< stop when (hi - lo) / hi <= tolerance
  int max_probes = 40;      ///< per replication
  /// Steady state (the default): duration-based arrivals with warm-up and cool-down excluded. Off: the
  /// config's own workload (a fixed request count measures how a burst drains, not a sustainable rate).
  bool steady_state = true;
  double duration_s = 0.0;  ///< arrivals per probe; 0 = enough for `measured_requests`
  /// Requests in the measured window when the duration is automatic (at least 2 x slo_concurrency).
  std::int64_t measured_requests = 1000;
  double warmup_fraction = 0.2;    ///< of the arrival duration, excluded at the start
  double cooldown_fraction = 0.1;  ///< excluded at the end
  /// Probe exactly these (ascending) instead of searching; the answer is interpolated where the
  /// attainment crosses the target (max_rate_from_curve).
  std::vector<double> rates;
  int replications = 1;
};

struct SloSearchResult {
  /// Mean over replications of each one's highest rate meeting the target (0 for one that met none).
  double max_rate_rps = 0.0;
  core::SampleSummary max_rate;  ///< over replications (interval when >= 2)
  std::vector<double> max_rate_by_replication;
  bool bracketed = false;             ///< every replication found a rate meeting and one missing the target
  std::vector<SloProbe> probes;       ///< sorted by rate, then replication
  std::vector<std::string> warnings;  ///< what makes the answer less trustworthy than it looks
};

/// The max sustainable rate from one attainment-vs-rate curve (ascending rates): the highest rate
/// meeting `target`, interpolated linearly to where the curve crosses it (0 when the lowest rate
/// misses it; the highest rate when none misses it, `censored` then set).
double max_rate_from_curve(const std::vector<double>& rates, const std::vector<double>& attainment, double target,
                           bool& censored);

/// Requests the system can hold at once (DP ranks x running seats per rank): the automatic probe
/// window measures at least twice as many, or a burst would be absorbed whatever its rate.
std::int64_t slo_concurrency(const ExperimentConfig& cfg);

/// The configuration one probe runs: `cfg` at `rate`, in steady state when `o` says so.
ExperimentConfig slo_probe_config(const ExperimentConfig& cfg, double rate, const SloSearchOptions& o, int replication,
                                  double window_scale = 1.0);

/// Runs the search; `on_probe` (optional) is told about each probe as it finishes.
SloSearchResult search_max_rate(const ExperimentConfig& cfg, const SloSearchOptions& o,
                                const std::function<void(const SloProbe&)>& on_probe = {});
/// rate_rps, replication, attainment, ttft_attainment, tpot_attainment, goodput_rps, ttft_p90_ms, ...
std::string slo_curve_csv(const SloSearchResult& r);

}  // namespace epsim::experiments
