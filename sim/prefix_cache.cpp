// SPDX-License-Identifier: Apache-2.0
#include "sim/prefix_cache.hpp"

#include <algorithm>
#include <cmath>

namespace epsim::serving {

namespace {
constexpr double k_bytes_per_gib = 1024.0 * 1024.0 * 1024.0;
}  // namespace

PrefixCache::PrefixCache(const PrefixCacheConfig& cfg, std::int64_t gpu_blocks, std::int64_t block_tokens,
                         double block_bytes, int gpus)
    : block_tokens_(block_tokens), recompute_when_cheaper_(cfg.recompute_when_cheaper), gpu_(gpu_blocks, cfg.eviction) {
  for (const CacheTier& t : cfg.tiers) {
    const auto blocks = static_cast<std::int64_t>(std::floor(t.capacity_gib * k_bytes_per_gib * gpus / block_bytes));
    tiers_.push_back(Tier{BlockStore(blocks, cfg.eviction), block_bytes / (t.read_gbps * 1e9 * gpus) * 1e9});
  }
}

std::int64_t PrefixCache::peek(const workloads::RequestSpec& spec, std::int64_t max_blocks) const {
  BlockCursor c;
  std::int64_t n = 0;
  while (n < max_blocks && gpu_.find(next_block_key(spec, block_tokens_, c)) >= 0) {
    ++n;
  }
  return n;
}

std::int64_t PrefixCache::acquire(RequestState& r, std::int64_t max_blocks, KvCache& kv, core::Time now,
                                  double recompute_ns_per_token) {
  r.cursor = BlockCursor{};
  r.cache_slots.clear();
  r.ready_ns = 0;
  while (static_cast<std::int64_t>(r.cache_slots.size()) < max_blocks) {
    const BlockCursor before = r.cursor;
    const std::int32_t slot = gpu_.find(next_block_key(r.spec, block_tokens_, r.cursor));
    if (slot < 0) {
      r.cursor = before;
      break;
    }
    gpu_.ref(slot);
    r.cache_slots.push_back(slot);
  }
  r.kv_blocks = static_cast<std::int64_t>(r.cache_slots.size());
  if (tiers_.empty() || r.kv_blocks >= max_blocks) {
    return r.kv_blocks * block_tokens_;
  }
  // The blocks after those, as far as some tier holds them.
  found_.clear();
  BlockCursor c = r.cursor;
  double fetch_ns = 0.0;
  while (r.kv_blocks + static_cast<std::int64_t>(found_.size()) < max_blocks) {
    const std::uint64_t key = next_block_key(r.spec, block_tokens_, c);
    std::size_t t = 0;
    while (t < tiers_.size() && tiers_[t].store.find(key) < 0) {
      ++t;
    }
    if (t == tiers_.size()) {
      break;
    }
    found_.push_back(Found{key, t});
    fetch_ns += tiers_[t].ns_per_block;
  }
  // As many as GPU memory has room for (free, or by evicting what no request uses).
  const auto room = static_cast<std::size_t>(std::max<std::int64_t>(0, kv.free_blocks() + gpu_.evictable()));
  if (found_.size() > room) {
    found_.resize(room);
    fetch_ns = 0.0;
    for (const Found& f : found_) {
      fetch_ns += tiers_[f.tier].ns_per_block;
    }
  }
  if (found_.empty()) {
    return r.kv_blocks * block_tokens_;
  }
  const double recompute_ns =
      recompute_ns_per_token * static_cast<double>(found_.size()) * static_cast<double>(block_tokens_);
  if (recompute_when_cheaper_ && recompute_ns < fetch_ns) {
    tally_.recomputed_blocks += static_cast<std::int64_t>(found_.size());
    return r.kv_blocks * block_tokens_;
  }
  for (const Found& f : found_) {
    if (!kv.can_take(1)) {
      evict(1, kv);
    }
    kv.take(1);
    tiers_[f.tier].store.touch(tiers_[f.tier].store.find(f.key));
    r.cache_slots.push_back(gpu_.insert(f.key, 1));
    next_block_key(r.spec, block_tokens_, r.cursor);
  }
  r.kv_blocks = static_cast<std::int64_t>(r.cache_slots.size());
  const core::Time start = std::max(now, link_free_ns_);
  link_free_ns_ = start + static_cast<core::Time>(std::llround(fetch_ns));
  r.ready_ns = link_free_ns_;
  tally_.fetched_blocks += static_cast<std::int64_t>(found_.size());
  tally_.fetches += 1;
  tally_.fetch_ns += fetch_ns;
  return r.kv_blocks * block_tokens_;
}

void PrefixCache::insert_computed(RequestState& r, std::int64_t computed_tokens, KvCache& kv) {
  const std::int64_t full = computed_tokens / block_tokens_;
  while (r.cursor.blocks < full) {
    const std::uint64_t key = next_block_key(r.spec, block_tokens_, r.cursor);
    std::int32_t slot = gpu_.find(key);
    if (slot >= 0) {
      gpu_.ref(slot);
      kv.give(1);  // the same content is cached already: this request's copy is freed
    } else {
      slot = gpu_.insert(key, 1);
    }
    r.cache_slots.push_back(slot);
  }
}

void PrefixCache::release(RequestState& r, std::int64_t computed_tokens, KvCache& kv) {
  insert_computed(r, computed_tokens, kv);
  // Deepest first: a request's tail blocks become older than its prefix, so eviction takes them first.
  for (std::size_t i = r.cache_slots.size(); i-- > 0;) {
    gpu_.unref(r.cache_slots[i]);
  }
  kv.give(r.kv_blocks - static_cast<std::int64_t>(r.cache_slots.size()));
  r.kv_blocks = 0;
  r.cache_slots.clear();
  r.cursor = BlockCursor{};
}

void PrefixCache::spill(std::size_t level, std::uint64_t key) {
  if (level == tiers_.size()) {
    ++tally_.dropped_blocks;
    return;
  }
  BlockStore& store = tiers_[level].store;
  if (const std::int32_t slot = store.find(key); slot >= 0) {
    store.touch(slot);  // a tier keeps what it held (a block fetched from it was not removed)
    return;
  }
  if (store.capacity() <= 0) {
    spill(level + 1, key);
    return;
  }
  if (store.size() >= store.capacity()) {
    spill(level + 1, store.evict());
  }
  store.insert(key, 0);
}

std::int64_t PrefixCache::evict(std::int64_t blocks, KvCache& kv) {
  std::int64_t n = 0;
  for (; n < blocks && gpu_.evictable() > 0; ++n) {
    spill(0, gpu_.evict());
    kv.give(1);
  }
  tally_.evicted_blocks += n;
  return n;
}

}  // namespace epsim::serving
