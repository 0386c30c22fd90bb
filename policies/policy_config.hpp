// SPDX-License-Identifier: Apache-2.0
#pragma once
// The [policy] section: placement and routing policies (registry names with their option tables),
// rebalancing, the load window and cost profile the policies see, and what they need, declared.
#include <memory>
#include <string>

#include "core/params.hpp"
#include "policies/cost_profile.hpp"
#include "policies/load_window.hpp"
#include "policies/policy_needs.hpp"
#include "policies/rebalance_config.hpp"

namespace toml {
inline namespace v3 {
class table;
}
}  // namespace toml

namespace epsim::policies {

struct PolicyConfig {
  std::string placement = "linear";
  std::string routing = "even";
  std::shared_ptr<const toml::table> placement_options;  ///< [policy.placement_options], validated
  std::shared_ptr<const toml::table> routing_options;    ///< [policy.routing_options], validated
  LoadWindowConfig load_window;
  RebalanceConfig rebalance;
  CostProfileConfig cost_profile;  ///< the C_g(n) curves policies see
  /// What the placement, the routing and the trigger declare they need (build_simulation profiles it).
  PolicyNeeds needs;
  /// The smaller EP bound of the placement and the trigger (0: none) and the key whose policy sets it.
  int max_ep_size = 0;
  std::string max_ep_size_key;
};

/// Reads and finishes [policy]; each named policy is built once here so that its name and options are
/// checked before anything runs. Errors name the source, the key and what was expected.
PolicyConfig parse_policy_section(core::ParamTable& policy);

/// What the placement, the routing and the trigger of `cfg` declare they need, together.
PolicyNeeds declared_needs(const PolicyConfig& cfg, const std::string& source);

/// The placement policy `cfg` names, built from its options (`source` names them in messages).
class PlacementPolicy;
class RoutingPolicy;
std::unique_ptr<PlacementPolicy> make_placement(const PolicyConfig& cfg, const std::string& source);
std::unique_ptr<RoutingPolicy> make_routing(const PolicyConfig& cfg, const std::string& source);

}  // namespace epsim::policies
