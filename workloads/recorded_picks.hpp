// SPDX-License-Identifier: Apache-2.0
#pragma once
// Picks in proportion to a recorded step's integer counts, exactly: the record is expanded to one entry
// per counted pick and each pick is a uniformly random entry (probability count_e / S exactly, where the
// alias method would round count_e / S to a double and then to its fixed-point coin). Building costs one
// small-integer write per recorded pick and no arithmetic; trace replay with small steps spent 41 % of its
// CPU rebuilding an alias table per step-layer (perf, DeepSeek-V3 EP64 at 2.2 req/s on 64-token steps).
#include <cstdint>
#include <span>
#include <vector>

#include "core/random_streams.hpp"

namespace epsim::workloads {

// The 64 x 64 -> 128-bit product (GCC and Clang; __extension__ keeps -Wpedantic quiet about it).
__extension__ using Uint128 = unsigned __int128;

/// A uniform integer in [0, n), n >= 1, exactly: Lemire's multiply-shift with rejection ("Fast random
/// integer generation in an interval", ACM TOMACS 2019). Consumes one 64-bit output, rarely more.
inline std::uint64_t uniform_below(core::Rng& rng, std::uint64_t n) {
  Uint128 m = static_cast<Uint128>(rng()) * n;
  auto low = static_cast<std::uint64_t>(m);
  if (low < n) {
    const std::uint64_t threshold = (0 - n) % n;  // 2^64 mod n: the outputs that would bias the result
    while (low < threshold) {
      m = static_cast<Uint128>(rng()) * n;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

class RecordedPicks {
 public:
  /// Most entries one record may expand to (a 4,096-token step of top-8 routing is 32,768).
  static constexpr std::uint64_t k_max_entries = std::uint64_t{1} << 22;

  /// Expands `counts` (one per category, at most 65,536 categories). Returns false, leaving the table
  /// unusable, when they sum to 0 or to more than k_max_entries.
  bool build(std::span<const std::uint32_t> counts);
  /// One category, with probability counts[e] / sum exactly.
  int draw(core::Rng& rng) const { return ids_[uniform_below(rng, entries_)]; }
  std::size_t entries() const { return entries_; }
  /// The expanded record: counts[0] zeros, then counts[1] ones, and so on.
  std::span<const std::uint16_t> expanded() const { return {ids_.data(), entries_}; }

 private:
  std::vector<std::uint16_t> ids_;  // entries_ entries, then build's padding
  std::size_t entries_ = 0;
};

/// Tallies `picks` draws of `table` into `out` (size = the categories), at most `cap` per category; picks
/// past a category's cap go, after all the draws, to the categories with the most recorded picks that still
/// have room (ties to the lower index), as multinomial_capped places them. `order` is a reusable workspace.
void tally_recorded(core::Rng& rng, const RecordedPicks& table, std::int64_t picks, std::int64_t cap,
                    std::span<const std::uint32_t> counts, std::span<std::int32_t> out, std::vector<int>& order);

}  // namespace epsim::workloads
