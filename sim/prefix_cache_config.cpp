// SPDX-License-Identifier: Apache-2.0
#include "sim/prefix_cache_config.hpp"

#include <array>

namespace epsim::serving {

PrefixCacheConfig parse_prefix_cache(core::ParamTable& root) {
  PrefixCacheConfig c;
  auto t = root.table("prefix_cache", "automatic prefix caching on the ranks that prefill (docs/serving.md)");
  c.enabled =
      t.boolean("enabled", false, "keep computed KV blocks by content and reuse them for prompts that begin alike");
  static constexpr std::array<core::Choice<EvictionPolicy>, 2> k_policies{
      {{"lru", EvictionPolicy::lru}, {"lfu", EvictionPolicy::lfu}}};
  c.eviction = t.choice<EvictionPolicy>(
      "eviction", EvictionPolicy::lru,
      "which unreferenced block goes first: lru (least recently used: vLLM, SGLang's default) or lfu (least "
      "used, ties to the least recent: SGLang's --radix-eviction-policy lfu)",
      k_policies);
  c.recompute_when_cheaper =
      t.boolean("recompute_when_cheaper", true,
                "blocks found only in a lower tier are recomputed when the rank's measured prefill time per token "
                "is below the fetch time, else fetched");
  for (core::ParamTable& tier : t.table_array("tier", "memory tiers below GPU memory, fastest first (HiCache)")) {
    CacheTier ct;
    ct.name = tier.string("name", "host", "the tier's name, for messages (host, ssd, ...)");
    ct.capacity_gib = tier.real_required("capacity_gib", "blocks it holds, GiB per GPU", {0.0, 1.0e6, true});
    ct.read_gbps = tier.real_required(
        "read_gbps", "GB/s per GPU bringing its blocks back to GPU memory (PCIe 5.0 x16 ~ 50; NVMe SSD ~ 5-7)",
        {0.0, 1.0e5, true});
    tier.finish();
    c.tiers.push_back(std::move(ct));
  }
  if (!c.enabled && !t.documenting() && !c.tiers.empty()) {
    t.fail("tier", "tiers below GPU memory hold evicted prefix-cache blocks: set prefix_cache.enabled = true");
  }
  t.finish();
  return c;
}

}  // namespace epsim::serving
