// SPDX-License-Identifier: Apache-2.0
#pragma once
// [policy.rebalance]: which trigger re-places experts during serving (trigger_registry(); its options sit
// beside it and are parsed by the trigger itself) and how the weights migrate. `policy.rebalance =
// "periodic"` is shorthand for a table with just the trigger.
#include <memory>
#include <string>

#include "core/params.hpp"
#include "policies/trigger_factory.hpp"

namespace toml {
inline namespace v3 {
class table;
}
}  // namespace toml

namespace epsim::policies {

struct RebalanceConfig {
  std::string trigger_name = "none";
  std::shared_ptr<const TriggerFactory> trigger;  ///< null: static placement
  MigrationMode migration = MigrationMode::stop_the_world;
  double migration_max_bytes_per_step = 0.0;  ///< compute_phases: bytes one step may move (0 = no bound)
  double migration_layer_overhead_ns = 0.0;   ///< network modes: fixed engine time per layer whose experts move
  int migration_layers_per_chunk = 1;         ///< chunked: consecutive layers moved at one step boundary
};

/// Reads [policy.rebalance] of `policy` (the table is finished by the trigger's parser).
RebalanceConfig parse_rebalance(core::ParamTable& policy);

/// Rewrites `policy.rebalance = "NAME"` in a whole config table (a file, or one --set) as the table
/// `[policy.rebalance] trigger = "NAME"`, so that layers merged before parsing keep both the trigger
/// and options given elsewhere (`--set policy.rebalance=periodic --set policy.rebalance.interval_steps=9`).
void expand_rebalance_shorthand(toml::table& config);

}  // namespace epsim::policies
