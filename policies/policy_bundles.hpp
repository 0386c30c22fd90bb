// SPDX-License-Identifier: Apache-2.0
#pragma once
// Named policy bundles: each of the seven policies compared in studies, with the prerequisites it needs
// to mean what its paper means (metro routes among replicas, so it comes with EPLB's replicating
// placement and one redundant slot per GPU; GRACE replicates its hot experts into redundant slots;
// ViBE recalibrates on drift; DIRECTOR re-optimises online). A bundle is a table of config overrides,
// merged over the base experiment like any other study axis level.
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

namespace epsim::policies {

/// What a bundle's overrides may depend on.
struct BundleContext {
  int ep_size = 1;  ///< redundant slots are given as one per GPU of the EP group
  int experts = 0;  ///< routed experts per layer (0: a multiple of ep_size)
  /// Slots left over when `experts` does not divide over the GPUs (384 on 72: 48), which even the
  /// one-copy bundles must add for a whole number of slots per GPU.
  int padding() const { return experts > 0 ? (ep_size - experts % ep_size) % ep_size : 0; }
};

struct PolicyBundle {
  std::string name;
  std::string description;
  toml::table (*overrides)(const BundleContext&);
};

/// Every bundle, in the order studies list them by default (the baselines first).
const std::vector<PolicyBundle>& policy_bundles();
/// The bundle named `name`; throws core::Error listing the valid names.
const PolicyBundle& policy_bundle(std::string_view name);

}  // namespace epsim::policies
