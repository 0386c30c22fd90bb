// SPDX-License-Identifier: Apache-2.0
#pragma once
// BlockStore: the cached KV blocks of one memory tier of one DP rank, by content key (block_hash.hpp).
// A block is referenced by the running requests that use it; an unreferenced block stays cached and is
// the first to go when the tier needs room, in the order of the eviction policy: least recently used
// (vLLM's and SGLang's default) or least frequently used, ties to the least recent (SGLang's
// --radix-eviction-policy lfu). The evictable blocks sit in an indexed min-heap over arrays that grow to
// the tier's capacity once: nothing allocates after warm-up.
#include <cstdint>
#include <vector>

#include "core/u64_index.hpp"

namespace epsim::serving {

enum class EvictionPolicy : std::uint8_t { lru, lfu };

class BlockStore {
 public:
  BlockStore(std::int64_t capacity_blocks, EvictionPolicy policy);

  std::int64_t capacity() const { return capacity_; }
  std::int64_t size() const { return static_cast<std::int64_t>(index_.size()); }
  /// Blocks no request references (what eviction may take).
  std::int64_t evictable() const { return static_cast<std::int64_t>(heap_.size()); }
  /// The slot holding `key`, or -1.
  std::int32_t find(std::uint64_t key) const { return index_.find(key); }
  /// Adds `key` (absent) referenced `refs` times (0: evictable at once); the caller made room (size() <
  /// capacity()). Returns its slot.
  std::int32_t insert(std::uint64_t key, int refs);
  /// A request starts using the block (a hit counts towards LFU).
  void ref(std::int32_t slot);
  /// A request stops using it; unreferenced, it becomes evictable as the most recent.
  void unref(std::int32_t slot);
  /// A use that takes no reference (a tier below HBM read back): refreshes its recency and count.
  void touch(std::int32_t slot);
  /// Removes the first block the policy evicts (evictable() > 0) and returns its key.
  std::uint64_t evict();
  int refs(std::int32_t slot) const { return entries_[static_cast<std::size_t>(slot)].refs; }

 private:
  struct Entry {
    std::uint64_t key = 0;
    std::uint64_t seq = 0;   // recency: the store's clock at the last use
    std::uint32_t hits = 0;  // uses, for LFU
    int refs = 0;
    std::int32_t heap_pos = -1;  // in heap_ while evictable
  };
  bool before(std::int32_t a, std::int32_t b) const;
  void heap_push(std::int32_t slot);
  void heap_remove(std::int32_t slot);
  void sift_up(std::size_t i);
  void sift_down(std::size_t i);
  void place(std::size_t i, std::int32_t slot) {
    heap_[i] = slot;
    entries_[static_cast<std::size_t>(slot)].heap_pos = static_cast<std::int32_t>(i);
  }

  std::int64_t capacity_;
  EvictionPolicy policy_;
  core::U64Index index_;
  std::vector<Entry> entries_;
  std::vector<std::int32_t> free_slots_;
  std::vector<std::int32_t> heap_;
  std::uint64_t clock_ = 0;
};

}  // namespace epsim::serving
