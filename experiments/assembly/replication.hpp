// SPDX-License-Identifier: Apache-2.0
#pragma once
// Replication seeds: replication r of a configuration adds r to the seed of every family it varies
// (the run seed for policies' own randomness, the workload's and the cluster's streams), and keeps the
// others. Replication 0 is the configuration itself. Every point of a study that shares r therefore
// sees the same draws of each family (common random numbers), whatever else the point changes.
#include <cstdint>

#include "experiments/assembly/experiment_config.hpp"

namespace epsim::experiments {

/// Which seed families replications draw afresh.
struct VariedFamilies {
  bool workload = true;
  bool cluster = true;
  bool policy = true;  ///< the run seed (policies' own search / clustering randomness)
};

/// `cfg` with replication r's seeds (every family's seed made explicit).
ExperimentConfig with_replication(const ExperimentConfig& cfg, std::int64_t r, const VariedFamilies& vary);

}  // namespace epsim::experiments
