// SPDX-License-Identifier: Apache-2.0
#pragma once
// The highest arrival rate whose SLO attainment stays >= a target (ViBE / DistServe's "max sustainable
// rate"). By default every probe measures steady state: arrivals for a duration long enough for the
// requested number of measured requests, the first and last part of it excluded (warm-up, cool-down),
// and the simulation stopped once every measured request's verdict is known (a request arriving by the
// window's end that has not finished by arrival + TTFT target + TPOT target x (longest output - 1) has
// missed), so an overloaded probe does not pay for draining its backlog. The search brackets (doubling
// or halving from the config's rate) then bisects; or, with `rates`, probes a fixed grid. Near a queueing
// cliff a window's first minutes look better than what the system sustains, so the rate found is then
// confirmed on a window k_slo_confirm_multiple times as long; when that fails the search steps down and
// goes on with long probes only: the answer is the highest rate that held on a long window, reported
// with its bracket (that rate, the lowest rate that failed). Replication r adds r to the workload's seed
// (replication.hpp) and searches again, starting from replication 0's bracket (SloPrior). Probes of one
// replication differ only by their rate.
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/confidence.hpp"
#include "experiments/assembly/experiment_config.hpp"
#include "sim/metrics.hpp"

namespace epsim::experiments {

/// Below this many measured requests at the answer the attainment there is too noisy to trust (binomial
/// 95 % half-width ~3 points at 90 %): `epsim slo` and a study's [study.max_rate] warn below it.
inline constexpr std::int64_t k_min_trusted_slo_requests = 400;
/// The confirmation window, as a multiple of the window of the search probe it confirms.
inline constexpr double k_slo_confirm_multiple = 3.0;

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
  /// A long probe: a confirmation of the search's rate, or a probe of the search after one failed.
  bool confirmation = false;
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
  /// Probe exactly these (ascending) instead of searching; the answer is the highest rate before the
  /// first one missing the target that also holds on a long window (curve_bracket, then confirmation).
  std::vector<double> rates;
  int replications = 1;
};

/// One replication's answer.
struct SloReplication {
  /// The highest rate that held (on a confirmation-length window in steady state), the bracket's low
  /// end; 0 when none did.
  double max_rate_rps = 0.0;
  /// The lowest rate above it that missed the target (on any window); NaN when none did: the answer is
  /// then censored, a lower bound (a grid that never reached the cliff).
  double bracket_high_rps = std::numeric_limits<double>::quiet_NaN();
  std::optional<SloProbe> confirmation;  ///< the long probe at the answer (none in burst mode or at 0)
  int failed_confirmations = 0;          ///< rates the short probes passed and a long probe refuted
  [[nodiscard]] bool censored() const { return std::isnan(bracket_high_rps); }
};

/// An interval for a max rate that keeps the search's resolution: the replications' brackets
/// [low_i, high_i) combined with their spread. low = the lower 95 % bound of the lows (the low itself for
/// one replication), high = the upper 95 % bound of the highs; high is NaN (unbounded) when any
/// replication is censored. Never below 0.
struct RateInterval {
  double low = 0.0;
  double high = std::numeric_limits<double>::quiet_NaN();
  std::int64_t censored = 0;  ///< replications whose search never failed
};
RateInterval combine_brackets(const std::vector<double>& lows, const std::vector<double>& highs);
/// "85 [80.1, 93.8]", "15 [15, 16]", or "≥ 36 [36, -]" (ASCII ">=") when censored.
std::string format_rate_interval(double mean, const RateInterval& i);

struct SloSearchResult {
  /// Mean over replications of each one's answer (0 for one where no rate held).
  double max_rate_rps = 0.0;
  core::SampleSummary max_rate;  ///< over replications (interval when >= 2)
  std::vector<double> max_rate_by_replication;
  std::vector<SloReplication> replications;
  RateInterval interval;              ///< combine_brackets over the replications
  bool bracketed = false;             ///< every replication found a rate meeting and one missing the target
  std::vector<SloProbe> probes;       ///< sorted by rate, then replication
  std::vector<std::string> warnings;  ///< what makes the answer less trustworthy than it looks
};

/// The max sustainable rate from one attainment-vs-rate curve (ascending rates): the highest rate
/// meeting `target`, interpolated linearly to where the curve crosses it (0 when the lowest rate
/// misses it; the highest rate when none misses it, `censored` then set).
double max_rate_from_curve(const std::vector<double>& rates, const std::vector<double>& attainment, double target,
                           bool& censored);
/// The bracket of the same curve: {the rate before the first one missing `target` (0 when the first
/// misses), that first missing rate (NaN when none misses: censored)}. NaN attainments are skipped.
std::pair<double, double> curve_bracket(const std::vector<double>& rates, const std::vector<double>& attainment,
                                        double target);

/// Where an earlier replication's search ended: the rate that held and the lowest rate above it that
/// failed. A later replication of the same configuration (only its seeds differ) starts there: it probes
/// both ends, widens the step geometrically (doubling it) on whichever side they leave open, then
/// bisects as usual; across seeds the answer moves by a few percent, so its bracket usually closes in two
/// probes where a search from the config's rate takes ~6 to 10.
struct SloPrior {
  double low_rps = 0.0;
  double high_rps = 0.0;
};
/// The prior a replication's answer gives the next ones: none when no rate held or none failed
/// (censored), as there is then no bracket to start from.
std::optional<SloPrior> slo_prior(const SloReplication& r);

/// Runs one probe of the search: `rate_rps` on a window `window_scale` x the automatic one (x the
/// fixed duration when one is set). The search decides which probes to run, grows windows that have
/// not settled and confirms; the default prober simulates (slo_probe_config).
using SloProber = std::function<SloProbe(double rate_rps, int replication, double window_scale)>;

/// One replication's search (or grid) with `probe`, from `start_rps` or, when given, from `prior` (a
/// grid ignores it); appends every probe to `probes`. `on_probe` (optional) is told about each probe as
/// it is kept.
SloReplication search_replication(const SloSearchOptions& o, double start_rps, int replication, const SloProber& probe,
                                  std::vector<SloProbe>& probes,
                                  const std::function<void(const SloProbe&)>& on_probe = {},
                                  const std::optional<SloPrior>& prior = std::nullopt);

/// Requests the system can hold at once (DP ranks x running seats per rank): the automatic probe
/// window measures at least twice as many, or a burst would be absorbed whatever its rate.
std::int64_t slo_concurrency(const ExperimentConfig& cfg);

/// The configuration one probe runs: `cfg` at `rate`, in steady state when `o` says so, on a window
/// `window_scale` x the automatic one (or x the fixed duration).
ExperimentConfig slo_probe_config(const ExperimentConfig& cfg, double rate, const SloSearchOptions& o, int replication,
                                  double window_scale = 1.0);

/// Runs the search; `on_probe` (optional) is told about each probe as it finishes. Replication 0
/// starts from `prior` when given (a study's later replication, from its point's replication 0), else
/// from the config's rate; every later replication from replication 0's bracket (slo_prior).
SloSearchResult search_max_rate(const ExperimentConfig& cfg, const SloSearchOptions& o,
                                const std::function<void(const SloProbe&)>& on_probe = {},
                                const std::optional<SloPrior>& prior = std::nullopt);
/// rate_rps, replication, attainment, ttft_attainment, tpot_attainment, goodput_rps, ttft_p90_ms, ...
std::string slo_curve_csv(const SloSearchResult& r);
/// The answer as JSON: target, max rate and interval, and per replication its bracket and confirmation.
std::string slo_result_json(const SloSearchResult& r, const SloSearchOptions& o);
/// The warning for a study's [study.max_rate] whose automatic window measures fewer requests than
/// k_min_trusted_slo_requests; empty when it measures enough (or the duration is fixed).
std::string slo_window_warning(const SloSearchOptions& o, const std::string& key);

}  // namespace epsim::experiments
