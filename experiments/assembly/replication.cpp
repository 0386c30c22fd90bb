// SPDX-License-Identifier: Apache-2.0
#include "experiments/assembly/replication.hpp"

namespace epsim::experiments {

ExperimentConfig with_replication(const ExperimentConfig& cfg, std::int64_t r, const VariedFamilies& vary) {
  ExperimentConfig c = cfg;
  const auto step = static_cast<std::uint64_t>(r);
  c.workload_seed = cfg.seed_of(SeedFamily::workload) + (vary.workload ? step : 0);
  c.cluster_seed = cfg.seed_of(SeedFamily::cluster) + (vary.cluster ? step : 0);
  c.seed = cfg.seed + (vary.policy ? step : 0);
  return c;
}

}  // namespace epsim::experiments
