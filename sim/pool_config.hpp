// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reading a deployment's pools: `[[pool]]` entries (docs/serving.md, "Pools"), or, without them, the
// shorthand of [parallel] and [disaggregation]: one colocated pool, or a prefill pool and a decode pool.
#include <cstdint>
#include <optional>
#include <vector>

#include "core/params.hpp"
#include "hardware/ep_comm.hpp"
#include "policies/policy_config.hpp"
#include "sim/pool_spec.hpp"
#include "sim/serving_config.hpp"

namespace epsim::serving {

/// What the pools are read against: the cluster, the model, and the sections pools inherit from.
struct PoolContext {
  int gpus = 0;
  int gpus_per_node = 0;
  std::int64_t routed_experts = 0;
  const hardware::EpCommConfig* comm = nullptr;                         ///< [communication]
  const std::optional<hardware::EpCommConfig>* prefill_comm = nullptr;  ///< [communication.prefill]
  const policies::PolicyConfig* policy = nullptr;                       ///< [policy]
};

/// The deployment's pools, in GPU order, validated (GPUs tile the cluster, sizes fit nodes and experts,
/// hand-offs name decode pools). Reads `pool` of `root`; `sections` holds [parallel]'s and
/// [disaggregation]'s values, the shorthand when there is no `[[pool]]`.
std::vector<PoolSpec> parse_pools(core::ParamTable& root, const ServingSections& sections, const PoolContext& ctx);

/// Checks an EP size against the node size: a group fits in a node (dividing it) or spans whole nodes.
void check_group_fits_nodes(const core::ParamTable& t, std::string_view key, int ep_size, int gpus_per_node);

}  // namespace epsim::serving
