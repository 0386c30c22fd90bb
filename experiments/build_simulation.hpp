#pragma once
// Turns a validated ExperimentConfig into the parts of a simulation: cost model, topology, placement
// (computed by the configured policy), routing policy factory and routing source.
#include "experiments/experiment_config.hpp"
#include "sim/serving/simulator.hpp"

namespace epsim::experiments {

serving::SimulationParts build_simulation(const ExperimentConfig& cfg);
struct LoadWindow {
  std::vector<double> total;  ///< tokens per expert over the window, [layer][expert]
  std::vector<double> steps;  ///< step by step, [step][layer][expert]
};
/// The load window a load-aware placement sees: the trace's first `policy.load_window_steps` steps, or as
/// many synthetic steps of `load_window_tokens` tokens drawn by a router of its own (same hot sets, its
/// own draws, so the run's routing is untouched).
LoadWindow profile_load(const ExperimentConfig& cfg);
/// Co-selection counts [layer][expert][expert] over the load window (GRACE's affinity): from the trace's
/// per-token top-k ids (a trace without them is a config error), or for synthetic routing the expected
/// co-selections of load_window_steps x load_window_tokens tokens under the router's topics.
std::vector<double> profile_coactivation(const ExperimentConfig& cfg);

}  // namespace epsim::experiments
