// SPDX-License-Identifier: Apache-2.0
#pragma once
// U64Index: an open-addressing map from nonzero 64-bit keys (already well mixed: hashes) to int32 values,
// linear probing with backward-shift deletion. Written here because std::unordered_map allocates a node
// per insert (the prefix cache inserts and erases blocks in the step loop) and Debian 12's Boost 1.74
// predates boost::unordered_flat_map. The table doubles when it passes half full, so after warm-up
// (capacity reached) nothing allocates.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

namespace epsim::core {

class U64Index {
 public:
  explicit U64Index(std::size_t expected = 16) { rehash(expected); }

  /// The value stored for `key`, or -1.
  std::int32_t find(std::uint64_t key) const {
    for (std::size_t i = key & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.key == key) {
        return s.value;
      }
      if (s.key == 0) {
        return -1;
      }
    }
  }
  /// Stores `value` for `key` (nonzero), replacing any value it had.
  void insert(std::uint64_t key, std::int32_t value) {
    if (2 * (size_ + 1) > slots_.size()) {
      rehash(2 * (size_ + 1));
    }
    std::size_t i = key & mask_;
    while (slots_[i].key != 0 && slots_[i].key != key) {
      i = (i + 1) & mask_;
    }
    size_ += slots_[i].key == 0 ? 1 : 0;
    slots_[i] = Slot{key, value};
  }
  /// Removes `key`; false when it was absent.
  bool erase(std::uint64_t key) {
    std::size_t i = key & mask_;
    while (slots_[i].key != key) {
      if (slots_[i].key == 0) {
        return false;
      }
      i = (i + 1) & mask_;
    }
    // Backward shift: move later entries of the probe run into the hole unless they sit at or after
    // their home slot's position relative to it, so every key stays reachable from its home.
    std::size_t hole = i;
    for (std::size_t j = (i + 1) & mask_; slots_[j].key != 0; j = (j + 1) & mask_) {
      const std::size_t home = slots_[j].key & mask_;
      if (((j - home) & mask_) >= ((j - hole) & mask_)) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole] = Slot{};
    --size_;
    return true;
  }
  std::size_t size() const { return size_; }

 private:
  struct Slot {
    std::uint64_t key = 0;
    std::int32_t value = -1;
  };
  void rehash(std::size_t at_least) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(std::bit_ceil(std::max<std::size_t>(at_least, 16)), Slot{});
    mask_ = slots_.size() - 1;
    size_ = 0;
    for (const Slot& s : old) {
      if (s.key != 0) {
        insert(s.key, s.value);
      }
    }
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

}  // namespace epsim::core
