#pragma once
// Turns a validated ExperimentConfig into the parts of a simulation: cost model, topology, placement
// (computed by the configured policy), routing policy factory and routing source.
#include "experiments/experiment_config.hpp"
#include "sim/serving/simulator.hpp"

namespace epsim::experiments {

serving::SimulationParts build_simulation(const ExperimentConfig& cfg);

}  // namespace epsim::experiments
