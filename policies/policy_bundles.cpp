// SPDX-License-Identifier: Apache-2.0
#include "policies/policy_bundles.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace epsim::policies {
namespace {

// [policy] placement/routing/rebalance and [parallel] redundant_experts, as a study override table. Every
// bundle adds the slots that round the experts up to a whole number per GPU (BundleContext::padding: the
// one-copy policies leave them empty or fill them as their placement says, docs/policies.md).
toml::table bundle(std::string_view placement, std::string_view routing, std::string_view rebalance,
                   std::int64_t redundant) {
  return toml::table{
      {"policy",
       toml::table{{"placement", placement}, {"routing", routing}, {"rebalance", toml::table{{"trigger", rebalance}}}}},
      {"parallel", toml::table{{"redundant_experts", redundant}}},
  };
}

}  // namespace

const std::vector<PolicyBundle>& policy_bundles() {
  static const std::vector<PolicyBundle> k_bundles{
      {"linear", "vLLM's contiguous placement, even routing, no redundant slots, static",
       [](const BundleContext& c) { return bundle("linear", "even", "none", c.padding()); }},
      {"eplb", "DeepSeek's EPLB with one redundant slot per GPU (replicas of the hottest experts), even routing",
       [](const BundleContext& c) { return bundle("eplb", "even", "none", c.padding() + c.ep_size); }},
      {"gem", "GEM's variability-aware placement, one copy per expert",
       [](const BundleContext& c) { return bundle("gem", "even", "none", c.padding()); }},
      {"vibe", "ViBE's speed-proportional placement with drift-triggered recalibration",
       [](const BundleContext& c) { return bundle("vibe", "even", "drift", c.padding()); }},
      {"director", "DIRECTOR's LP placement, re-optimised online before each batch of queued work",
       [](const BundleContext& c) { return bundle("director", "even", "director", c.padding()); }},
      {"metro", "metro's routing among the replicas of EPLB with one redundant slot per GPU",
       [](const BundleContext& c) { return bundle("eplb", "metro", "none", c.padding() + c.ep_size); }},
      {"grace", "GRACE-MoE's grouping and replication (one redundant slot per GPU) with locality routing",
       [](const BundleContext& c) { return bundle("grace", "grace", "none", c.padding() + c.ep_size); }},
  };
  return k_bundles;
}

const PolicyBundle& policy_bundle(std::string_view name) {
  std::vector<std::string> names;
  for (const PolicyBundle& b : policy_bundles()) {
    if (b.name == name) {
      return b;
    }
    names.push_back(b.name);
  }
  throw core::Error(fmt::format("unknown policy bundle \"{}\"; valid: {}", name, fmt::join(names, ", ")));
}

}  // namespace epsim::policies
