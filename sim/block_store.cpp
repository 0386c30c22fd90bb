// SPDX-License-Identifier: Apache-2.0
#include "sim/block_store.hpp"

#include <algorithm>

namespace epsim::serving {

BlockStore::BlockStore(std::int64_t capacity_blocks, EvictionPolicy policy)
    : capacity_(capacity_blocks), policy_(policy), index_(64) {}

bool BlockStore::before(std::int32_t a, std::int32_t b) const {
  const Entry& x = entries_[static_cast<std::size_t>(a)];
  const Entry& y = entries_[static_cast<std::size_t>(b)];
  if (policy_ == EvictionPolicy::lfu && x.hits != y.hits) {
    return x.hits < y.hits;
  }
  return x.seq < y.seq;
}

void BlockStore::sift_up(std::size_t i) {
  const std::int32_t slot = heap_[i];
  while (i > 0) {
    const std::size_t parent = (i - 1) / 2;
    if (!before(slot, heap_[parent])) {
      break;
    }
    place(i, heap_[parent]);
    i = parent;
  }
  place(i, slot);
}

void BlockStore::sift_down(std::size_t i) {
  const std::int32_t slot = heap_[i];
  const std::size_t n = heap_.size();
  for (;;) {
    std::size_t child = 2 * i + 1;
    if (child >= n) {
      break;
    }
    if (child + 1 < n && before(heap_[child + 1], heap_[child])) {
      ++child;
    }
    if (!before(heap_[child], slot)) {
      break;
    }
    place(i, heap_[child]);
    i = child;
  }
  place(i, slot);
}

void BlockStore::heap_push(std::int32_t slot) {
  heap_.push_back(slot);
  sift_up(heap_.size() - 1);
}

void BlockStore::heap_remove(std::int32_t slot) {
  Entry& e = entries_[static_cast<std::size_t>(slot)];
  const auto i = static_cast<std::size_t>(e.heap_pos);
  e.heap_pos = -1;
  const std::int32_t last = heap_.back();
  heap_.pop_back();
  if (i < heap_.size()) {
    place(i, last);
    sift_up(i);
    sift_down(static_cast<std::size_t>(entries_[static_cast<std::size_t>(last)].heap_pos));
  }
}

std::int32_t BlockStore::insert(std::uint64_t key, int refs) {
  std::int32_t slot = 0;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<std::int32_t>(entries_.size());
    entries_.emplace_back();
  }
  Entry& e = entries_[static_cast<std::size_t>(slot)];
  e = Entry{key, ++clock_, 1, refs, -1};
  index_.insert(key, slot);
  if (refs == 0) {
    heap_push(slot);
  }
  return slot;
}

void BlockStore::ref(std::int32_t slot) {
  Entry& e = entries_[static_cast<std::size_t>(slot)];
  if (e.refs++ == 0) {
    heap_remove(slot);
  }
  e.seq = ++clock_;
  ++e.hits;
}

void BlockStore::unref(std::int32_t slot) {
  Entry& e = entries_[static_cast<std::size_t>(slot)];
  e.seq = ++clock_;
  if (--e.refs == 0) {
    heap_push(slot);
  }
}

void BlockStore::touch(std::int32_t slot) {
  Entry& e = entries_[static_cast<std::size_t>(slot)];
  e.seq = ++clock_;
  ++e.hits;
  if (e.heap_pos >= 0) {
    sift_down(static_cast<std::size_t>(e.heap_pos));  // later and more used: never moves up
  }
}

std::uint64_t BlockStore::evict() {
  const std::int32_t slot = heap_.front();
  const std::uint64_t key = entries_[static_cast<std::size_t>(slot)].key;
  heap_remove(slot);
  index_.erase(key);
  free_slots_.push_back(slot);
  return key;
}

}  // namespace epsim::serving
