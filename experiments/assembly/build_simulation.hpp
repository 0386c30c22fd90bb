// SPDX-License-Identifier: Apache-2.0
#pragma once
// Turns a validated ExperimentConfig into the parts of a simulation (builders.hpp for each piece): cost
// model, topology, the placement computed by the configured policy from what it declared it needs, the
// routing policy and source, and the rebalance trigger with its migration.
#include "experiments/assembly/experiment_config.hpp"
#include "experiments/assembly/load_window.hpp"
#include "sim/simulator.hpp"

namespace epsim::experiments {

/// `windows`: the pools' load windows, profiled first by the caller (profile_pool_windows: a warm-up
/// window runs a simulation of its own, so it is a step of its own, never hidden in here).
serving::SimulationParts build_simulation(const ExperimentConfig& cfg, const PoolWindows& windows);

}  // namespace epsim::experiments
