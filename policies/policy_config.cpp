// SPDX-License-Identifier: Apache-2.0
#include "policies/policy_config.hpp"

#include <toml++/toml.h>

#include "policies/placement_policy.hpp"
#include "policies/registry.hpp"
#include "policies/routing_policy.hpp"

namespace epsim::policies {

namespace {
// The needs of a placement and a routing, with the trigger's when there is one.
PolicyNeeds with_trigger(PolicyNeeds policies, const RebalanceConfig& rebalance) {
  return rebalance.trigger ? policies | rebalance.trigger->needs() : policies;
}
}  // namespace

PolicyConfig parse_policy_section(core::ParamTable& policy) {
  PolicyConfig c;
  c.placement = policy.string("placement", "linear", "placement policy");
  c.routing = policy.string("routing", "even", "token routing policy among replicas");
  const auto check = [&](const auto& registry, const std::string& key, const std::string& name) {
    if (const std::string unknown = registry.unknown_message(name); !unknown.empty()) {
      policy.fail(key, unknown);
    }
    auto options = policy.table(key + "_options", "options of the " + key + " policy");
    return registry.create(name, options);
  };
  const std::unique_ptr<PlacementPolicy> placement = check(placement_registry(), "placement", c.placement);
  const PolicyNeeds needs = placement->needs() | check(routing_registry(), "routing", c.routing)->needs();
  const auto bound = [&](int max_ep, const char* key) {
    if (max_ep > 0 && (c.max_ep_size == 0 || max_ep < c.max_ep_size)) {
      c.max_ep_size = max_ep;
      c.max_ep_size_key = key;
    }
  };
  bound(placement->max_ep_size(), "policy.placement");
  c.placement_options = policy.merged_table("placement_options");
  c.routing_options = policy.merged_table("routing_options");
  c.load_window = parse_load_window(policy);
  c.rebalance = parse_rebalance(policy);
  c.needs = with_trigger(needs, c.rebalance);
  if (c.rebalance.trigger) {
    bound(c.rebalance.trigger->max_ep_size(), "policy.rebalance");
  }
  auto profile = policy.table("cost_profile", "the per-GPU cost curves C_g(n) that load-aware policies see");
  c.cost_profile = parse_cost_profile(profile);
  policy.finish();
  return c;
}

PolicyNeeds declared_needs(const PolicyConfig& cfg, const std::string& source) {
  return with_trigger(make_placement(cfg, source)->needs() | make_routing(cfg, source)->needs(), cfg.rebalance);
}

std::unique_ptr<PlacementPolicy> make_placement(const PolicyConfig& cfg, const std::string& source) {
  core::ParamTable t({core::ParamLayer{cfg.placement_options.get(), source}}, "policy.placement_options");
  return placement_registry().create(cfg.placement, t);
}

std::unique_ptr<RoutingPolicy> make_routing(const PolicyConfig& cfg, const std::string& source) {
  core::ParamTable t({core::ParamLayer{cfg.routing_options.get(), source}}, "policy.routing_options");
  return routing_registry().create(cfg.routing, t);
}

}  // namespace epsim::policies
