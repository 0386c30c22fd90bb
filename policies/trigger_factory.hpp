// SPDX-License-Identifier: Apache-2.0
#pragma once
// The rebalance-trigger family as configured: a factory parsed from [policy.rebalance] (registry.hpp's
// trigger_registry()) that declares what its triggers need and how their placements migrate by default,
// and makes one trigger per EP group from what the simulation was built with.
#include <functional>
#include <memory>
#include <string>

#include "policies/cost_curves.hpp"
#include "policies/placement_policy.hpp"
#include "policies/policy_needs.hpp"
#include "policies/rebalance_trigger.hpp"

namespace epsim::policies {

/// How a new placement's expert weights move (the engine's migration component carries it out).
enum class MigrationMode : std::uint8_t {
  stop_the_world,  ///< the group stops serving until every changed expert has landed
  overlapped,      ///< serving goes on with the old placement until they land
  compute_phases,  ///< they move only in the compute phases of the group's steps (DIRECTOR's schedule)
  layer_by_layer,  ///< one layer after another while serving goes on; each layer switches when its own land
  chunked,         ///< chunks of layers, each stopping the group, one chunk per step boundary (SGLang, ATOM)
};

/// What a trigger is made from: the placed group's input (shape, load window, its GPUs' cost curves,
/// links) and the model; `curves_of_group` gives another group's curves (each group's GPUs differ).
struct TriggerContext {
  PlacementInput group;
  std::function<std::shared_ptr<const CostCurves>(int group)> curves_of_group;
  std::string model_name;
  /// The run's own placement policy (its options: EPLB's variant, ...), built afresh; set only when the
  /// run places by EPLB, so that periodic EPLB re-solves with the variant the run placed with.
  std::function<std::unique_ptr<PlacementPolicy>()> run_eplb;
};

class TriggerFactory {
 public:
  virtual ~TriggerFactory() = default;
  /// What build_simulation must profile for the triggers (load window, cost curves, forecasts).
  virtual PolicyNeeds needs() const = 0;
  /// How placements migrate when [policy.rebalance] migration = "auto".
  virtual MigrationMode default_migration() const { return MigrationMode::stop_the_world; }
  /// Whether its placements fill redundant slots that the initial placement leaves empty.
  virtual bool fills_redundant_slots() const { return false; }
  /// The largest EP group one re-optimisation handles in about a minute of one core (0: no bound).
  virtual int max_ep_size() const { return 0; }
  /// The trigger of EP group `group`.
  virtual std::unique_ptr<RebalanceTrigger> make(const TriggerContext& ctx, int group) const = 0;
};

}  // namespace epsim::policies
