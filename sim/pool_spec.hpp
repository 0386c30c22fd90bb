// SPDX-License-Identifier: Apache-2.0
#pragma once
// A deployment is a list of pools (docs/serving.md, "Pools"): each a run of consecutive GPUs cut into
// EP groups of one size, with its own role, GPU model, parallelism, communication kernels, policies and
// KV budget. Requests arrive at the pools that prefill (role prefill or colocated) and flow from a
// prefill pool to the decode pools it hands off to. A pool is a value: adding a pool is a config, not code.
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/params.hpp"
#include "hardware/ep_comm.hpp"
#include "hardware/gpu_spec.hpp"
#include "policies/policy_config.hpp"
#include "sim/pool_shape.hpp"

namespace epsim::serving {

/// What a pool does with a request. New roles (attention/FFN halves, a draft model) extend this enum.
enum class PoolRole : std::uint8_t {
  colocated,  ///< prefills and decodes its own requests
  prefill,    ///< prefills arrivals, then hands their KV caches to a decode pool
  decode,     ///< decodes requests handed to it
};

inline constexpr std::array<core::Choice<PoolRole>, 3> k_pool_roles{
    {{"colocated", PoolRole::colocated}, {"prefill", PoolRole::prefill}, {"decode", PoolRole::decode}}};

/// The role's config name.
std::string_view role_name(PoolRole role);

struct PoolSpec {
  std::string name;
  PoolRole role = PoolRole::colocated;
  PoolShape shape;                       ///< its groups, EP size and first GPU
  int attention_tp = 1;                  ///< GPUs per attention rank (1 = DP attention)
  int redundant_experts = 0;             ///< expert slots per group beyond one per logical expert
  std::optional<hardware::GpuSpec> gpu;  ///< its own GPU model (absent: the cluster's)
  hardware::EpCommConfig comm;           ///< how its dispatch and combine move tokens
  policies::PolicyConfig policy;         ///< its placement, routing and rebalancing
  std::vector<int> handoff_to;           ///< prefill pools: the decode pools (indices) it hands off to
  std::string handoff = "least_loaded";  ///< prefill pools: handoff_registry() entry choosing the rank

  bool takes_arrivals() const { return role != PoolRole::decode; }
  int gpus() const { return shape.gpus(); }
  int ranks_per_group() const { return shape.ep_size / attention_tp; }
  int slots_per_gpu(std::int64_t routed_experts) const {
    return static_cast<int>((routed_experts + redundant_experts) / shape.ep_size);
  }
};

/// The pool holding EP group `group` (pools tile the groups in order).
const PoolSpec& pool_of_group(std::span<const PoolSpec> pools, int group);
/// EP groups over every pool.
int total_groups(std::span<const PoolSpec> pools);
/// The largest EP size of any pool.
int max_ep_size(std::span<const PoolSpec> pools);
/// The pool whose figures summaries report as the deployment's (ep_size, slots, memory): the first that
/// decodes (decode or colocated).
const PoolSpec& primary_pool(std::span<const PoolSpec> pools);
/// "EP8", or "prefill 1 x EP32, decode 1 x EP72" (one "name groups x EPn" per pool).
std::string describe_pools(std::span<const PoolSpec> pools);

}  // namespace epsim::serving
