// SPDX-License-Identifier: Apache-2.0
#pragma once
// PrefixCache: automatic prefix caching on one DP rank (vLLM's automatic prefix caching; SGLang's radix
// cache at the granularity of a KV block). Every full block a request computes is keyed by its content
// (block_hash.hpp) and kept in GPU memory after the request lets go of it, until eviction needs the
// room; a later request whose prompt begins with the same blocks references them instead of computing
// them. Its prefill then starts after those tokens (attention still reads them as context) and only the
// tokens it computes travel to the experts. Blocks evicted from GPU memory go down the configured tiers
// (host DRAM, SSD), from which a later hit fetches them back over the rank's host link (a timed, serial
// transfer) when that is faster than recomputing them.
#include <cstdint>
#include <vector>

#include "core/time.hpp"
#include "sim/block_store.hpp"
#include "sim/kv_cache.hpp"
#include "sim/prefix_cache_config.hpp"
#include "sim/request_state.hpp"

namespace epsim::serving {

/// What a rank's cache did over a run.
struct PrefixCacheTally {
  std::int64_t evicted_blocks = 0;     ///< left GPU memory to make room
  std::int64_t dropped_blocks = 0;     ///< left the last tier (or GPU memory, without tiers): gone
  std::int64_t fetched_blocks = 0;     ///< brought back from a tier for a hit
  std::int64_t recomputed_blocks = 0;  ///< found in a tier but recomputed (cheaper than fetching)
  std::int64_t fetches = 0;            ///< admissions that fetched
  double fetch_ns = 0.0;               ///< their transfer time, summed

  void add(const PrefixCacheTally& o) {
    evicted_blocks += o.evicted_blocks;
    dropped_blocks += o.dropped_blocks;
    fetched_blocks += o.fetched_blocks;
    recomputed_blocks += o.recomputed_blocks;
    fetches += o.fetches;
    fetch_ns += o.fetch_ns;
  }
};

class PrefixCache {
 public:
  /// A rank of `gpu_blocks` KV blocks of `block_tokens` tokens, `block_bytes` each, over `gpus` GPUs
  /// (attention TP: the tiers' capacity and bandwidth are per GPU).
  PrefixCache(const PrefixCacheConfig& cfg, std::int64_t gpu_blocks, std::int64_t block_tokens, double block_bytes,
              int gpus);

  /// Leading blocks of `spec`'s content cached in GPU memory, at most `max_blocks` (changes nothing:
  /// what a cache-aware router looks at).
  std::int64_t peek(const workloads::RequestSpec& spec, std::int64_t max_blocks) const;
  /// An admission: `r` (holding no blocks) references its cached leading blocks, at most `max_blocks`:
  /// those in GPU memory, then those a tier holds when fetching them beats recomputing them at
  /// `recompute_ns_per_token` (and GPU memory has room: `kv`). Sets r.cache_slots, r.cursor, r.kv_blocks
  /// and, when it fetched, r.ready_ns (the transfer's end, after those already queued on the host link).
  /// Returns the tokens it found.
  std::int64_t acquire(RequestState& r, std::int64_t max_blocks, KvCache& kv, core::Time now,
                       double recompute_ns_per_token);
  /// Keys `r`'s full blocks up to `computed_tokens` not keyed yet: each becomes a cached block `r`
  /// references (or, when another request cached that content meanwhile, `r` references that one and
  /// its own copy is freed).
  void insert_computed(RequestState& r, std::int64_t computed_tokens, KvCache& kv);
  /// `r` lets go of its blocks, `computed_tokens` of them computed: its full blocks stay cached (the
  /// deepest the most evictable, as vLLM frees them), the rest are freed.
  void release(RequestState& r, std::int64_t computed_tokens, KvCache& kv);
  /// Evicts up to `blocks` unreferenced blocks from GPU memory (into the first tier, if any), giving their
  /// room back to `kv`; returns how many.
  std::int64_t evict(std::int64_t blocks, KvCache& kv);
  /// Unreferenced blocks in GPU memory: room eviction can make.
  std::int64_t evictable() const { return gpu_.evictable(); }
  std::int64_t cached_blocks() const { return gpu_.size(); }
  const PrefixCacheTally& tally() const { return tally_; }
  /// Blocks a tier holds (0: the first below GPU memory).
  std::int64_t tier_blocks(std::size_t tier) const { return tiers_[tier].store.size(); }

 private:
  struct Tier {
    BlockStore store;
    double ns_per_block;
  };
  // Puts `key`, evicted from the level above, into tier `level` (pushing that tier's victim further down).
  void spill(std::size_t level, std::uint64_t key);

  std::int64_t block_tokens_;
  bool recompute_when_cheaper_;
  BlockStore gpu_;
  std::vector<Tier> tiers_;
  core::Time link_free_ns_ = 0;  // the host link is busy with earlier fetches until then
  PrefixCacheTally tally_;
  struct Found {
    std::uint64_t key;
    std::size_t tier;
  };
  std::vector<Found> found_;  // acquire's scratch: blocks found in tiers
};

}  // namespace epsim::serving
