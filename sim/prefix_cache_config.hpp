// SPDX-License-Identifier: Apache-2.0
#pragma once
// [prefix_cache]: automatic prefix caching on the DP ranks of the pools that prefill (docs/serving.md):
// the eviction policy, and the tiers below GPU memory a block evicted from it goes to (host DRAM, SSD;
// SGLang HiCache, LMCache, Dynamo KVBM) with their capacity and read bandwidth per GPU.
#include <cstdint>
#include <string>
#include <vector>

#include "core/params.hpp"
#include "sim/block_store.hpp"

namespace epsim::serving {

/// A memory tier below GPU memory, per GPU (a DP rank of `attention_tp` GPUs has that many times both).
struct CacheTier {
  std::string name;
  double capacity_gib = 0.0;  ///< per GPU
  double read_gbps = 0.0;     ///< GB/s per GPU bringing blocks back to GPU memory
};

struct PrefixCacheConfig {
  bool enabled = false;
  EvictionPolicy eviction = EvictionPolicy::lru;
  std::vector<CacheTier> tiers;  ///< fastest first: an evicted block goes to the first, then the next
  /// Blocks found only in a tier are fetched when that is faster than recomputing them (the rank's
  /// measured prefill time per token), else recomputed; false: always fetched.
  bool recompute_when_cheaper = true;
};

/// Reads [prefix_cache] of `root` (absent: off).
PrefixCacheConfig parse_prefix_cache(core::ParamTable& root);

}  // namespace epsim::serving
