// SPDX-License-Identifier: Apache-2.0
#pragma once
// load_balancer = "cache_aware" (serving_config.hpp's CacheAwareConfig, SGLang router's policy): which
// DP rank of the entry groups takes a request, from the ranks' loads and prefix caches.
#include <span>
#include <utility>

#include "sim/scheduler.hpp"
#include "sim/serving_config.hpp"
#include "workloads/request.hpp"

namespace epsim::serving {

/// (index into `groups`, rank) for `spec`: the least loaded rank when the load is imbalanced, else the
/// rank holding the longest start of the prompt when it covers more than cache_threshold of it, else
/// the rank whose cache holds the fewest blocks; ties to the first rank seen. Every scheduler caches.
std::pair<std::size_t, int> pick_cache_aware(const CacheAwareConfig& cfg, std::span<const Scheduler* const> groups,
                                             const workloads::RequestSpec& spec, std::int64_t block_tokens);

}  // namespace epsim::serving
