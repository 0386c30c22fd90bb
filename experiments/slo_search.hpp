#pragma once
// The highest arrival rate whose SLO attainment stays >= a target (ViBE / DistServe's "max sustainable
// rate"): bracketing (doubling or halving from the config's rate), then bisection, every probe with the
// config's seed so that probes differ only by their rate (the arrival gaps scale as 1 / rate).
#include <functional>
#include <string>
#include <vector>

#include "experiments/experiment_config.hpp"
#include "sim/serving/metrics.hpp"

namespace epsim::experiments {

struct SloProbe {
  double rate_rps = 0.0;
  serving::RunSummary summary;
};

struct SloSearchResult {
  double max_rate_rps = 0.0;     ///< the highest probed rate meeting the target (0 if none did)
  bool bracketed = false;        ///< a rate meeting the target and one missing it were both found
  std::vector<SloProbe> probes;  ///< sorted by rate
};

struct SloSearchOptions {
  double target = 0.9;      ///< attainment to sustain
  double tolerance = 0.02;  ///< stop when (hi - lo) / hi <= tolerance
  int max_probes = 40;
};

/// Runs the search; `on_probe` (optional) is told about each probe as it finishes.
SloSearchResult search_max_rate(const ExperimentConfig& cfg, const SloSearchOptions& o,
                                const std::function<void(const SloProbe&)>& on_probe = {});
/// rate_rps, attainment, ttft_attainment, tpot_attainment, goodput_rps, ttft_p90_ms, tpot_p90_ms, ...
std::string slo_curve_csv(const SloSearchResult& r);

}  // namespace epsim::experiments
