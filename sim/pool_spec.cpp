// SPDX-License-Identifier: Apache-2.0
#include "sim/pool_spec.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"

namespace epsim::serving {

std::string_view role_name(PoolRole role) {
  return core::choice_name<PoolRole>(k_pool_roles, role);
}

const PoolSpec& pool_of_group(std::span<const PoolSpec> pools, int group) {
  for (const PoolSpec& p : pools) {
    if (p.shape.holds(group)) {
      return p;
    }
  }
  throw core::Error(fmt::format("no pool holds EP group {}", group));
}

int total_groups(std::span<const PoolSpec> pools) {
  int n = 0;
  for (const PoolSpec& p : pools) {
    n += p.shape.groups;
  }
  return n;
}

int max_ep_size(std::span<const PoolSpec> pools) {
  int n = 0;
  for (const PoolSpec& p : pools) {
    n = std::max(n, p.shape.ep_size);
  }
  return n;
}

const PoolSpec& primary_pool(std::span<const PoolSpec> pools) {
  for (const PoolSpec& p : pools) {
    if (p.role != PoolRole::prefill) {
      return p;
    }
  }
  throw core::Error("a deployment needs a pool that decodes (role decode or colocated)");
}

std::string describe_pools(std::span<const PoolSpec> pools) {
  const bool one_size = std::all_of(pools.begin(), pools.end(),
                                    [&](const PoolSpec& p) { return p.shape.ep_size == pools.front().shape.ep_size; });
  if (one_size) {
    return fmt::format("EP{}", pools.front().shape.ep_size);
  }
  std::string out;
  for (const PoolSpec& p : pools) {
    out += fmt::format("{}{} {} x EP{}", out.empty() ? "" : ", ", p.name, p.shape.groups, p.shape.ep_size);
  }
  return out;
}

}  // namespace epsim::serving
