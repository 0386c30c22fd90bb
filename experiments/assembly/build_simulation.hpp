#pragma once
// Turns a validated ExperimentConfig into the parts of a simulation (builders.hpp for each piece): cost
// model, topology, the placement computed by the configured policy from what it declared it needs, the
// routing policy and source, and the rebalance trigger with its migration.
#include "experiments/assembly/experiment_config.hpp"
#include "sim/simulator.hpp"

namespace epsim::experiments {

serving::SimulationParts build_simulation(const ExperimentConfig& cfg);

}  // namespace epsim::experiments
