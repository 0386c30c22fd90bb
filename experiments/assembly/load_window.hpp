// SPDX-License-Identifier: Apache-2.0
#pragma once
// The routing a load-aware policy sees before the run (policies/load_window.hpp says which): a trace's
// first steps, steps recorded by a warm-up run with the linear placement, or synthetic steps; and the
// co-selection counts GRACE's affinity is made of, and the cross-layer transitions MoETuner's.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "experiments/assembly/experiment_config.hpp"

namespace epsim::experiments {

struct LoadWindow {
  std::vector<double> total;  ///< tokens per expert over the window, [layer][expert]
  std::vector<double> steps;  ///< step by step, [step][layer][expert]
  /// Per step: 1 when it was a prefill pass (more prompt than decode tokens); a warm-up's only.
  std::vector<std::uint8_t> prefill_steps;
};
/// The load window of the policy of `group`'s pool (its load_window): the trace's first `steps` steps, a warm-up run's
/// real steps after its ramp-up, or as many synthetic steps of `tokens` tokens drawn by a router of its own (same hot
/// sets, its own draws, so the run's routing is untouched). A warm-up records the steps of EP group `group`
/// (builders.hpp's placed group: a pool's placement sees its own pool's routing).
LoadWindow profile_load(const ExperimentConfig& cfg, int group);
/// Co-selection counts [layer][expert][expert] over the load window (GRACE's affinity): from the trace's
/// per-token top-k ids (a trace without them is a config error), or for synthetic routing the expected
/// co-selections of the window's tokens under the router's topics; the window of pool `pool`'s policy.
std::vector<double> profile_coactivation(const ExperimentConfig& cfg, std::size_t pool);
/// Cross-layer transitions [layer][expert][expert] for layers 0 .. L - 2 over the load window (MoETuner's
/// routing dependency): from the trace's per-token top-k ids (a trace without them is a config error), or
/// for synthetic routing the expected transitions of the window's tokens under the router's topics.
std::vector<double> profile_transitions(const ExperimentConfig& cfg, std::size_t pool);

/// The load window of every pool whose policies declared they need one (PolicyNeeds::load_window),
/// indexed like cfg.pools (empty for the others). The explicit step before build_simulation: a warm-up
/// window runs a simulation of its own here, never inside build_simulation.
struct PoolWindows {
  std::vector<std::optional<LoadWindow>> of_pool;
};
PoolWindows profile_pool_windows(const ExperimentConfig& cfg);

}  // namespace epsim::experiments
