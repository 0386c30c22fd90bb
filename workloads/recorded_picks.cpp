// SPDX-License-Identifier: Apache-2.0
#include "workloads/recorded_picks.hpp"

#include <algorithm>
#include <cstring>

#include "workloads/multinomial.hpp"

namespace epsim::workloads {

bool RecordedPicks::build(std::span<const std::uint32_t> counts) {
  std::uint64_t total = 0;
  for (const std::uint32_t c : counts) {
    total += c;
  }
  entries_ = 0;
  if (total == 0 || total > k_max_entries || counts.size() > 65536) {
    return false;
  }
  // No allocation once the buffer has grown to the largest record (the step loop reuses it). Each
  // category writes a block of k_block copies of its id where its run starts, unconditionally, and the
  // next category's block overwrites the excess (an empty category's block is overwritten whole), so a
  // run of up to k_block entries costs one 16-byte store and no branch; longer runs write more blocks.
  // Filling the runs one by one mispredicted a branch per category (~2.7 us a layer at 256 experts); a
  // mark-and-scan over the entries cost a write and a read per entry.
  constexpr std::size_t k_block = 8;
  ids_.resize(total + k_block);
  std::uint16_t* const ids = ids_.data();
  std::size_t at = 0;
  for (std::size_t e = 0; e < counts.size(); ++e) {
    std::uint16_t block[k_block];
    std::fill(block, block + k_block, static_cast<std::uint16_t>(e));
    const std::uint32_t c = counts[e];
    for (std::size_t k = 0; k == 0 || k < c; k += k_block) {
      std::memcpy(ids + at + k, block, sizeof block);
    }
    at += c;
  }
  entries_ = total;
  return true;
}

void tally_recorded(core::Rng& rng, const RecordedPicks& table, std::int64_t picks, std::int64_t cap,
                    std::span<const std::uint32_t> counts, std::span<std::int32_t> out, std::vector<int>& order) {
  std::fill(out.begin(), out.end(), 0);
  std::int64_t overflow = 0;
  for (std::int64_t i = 0; i < picks; ++i) {
    std::int32_t& c = out[static_cast<std::size_t>(table.draw(rng))];
    if (c < cap) {
      ++c;
    } else {
      ++overflow;
    }
  }
  if (overflow == 0) {
    return;
  }
  order.resize(counts.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    order[i] = static_cast<int>(i);
  }
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    const std::uint32_t ca = counts[static_cast<std::size_t>(a)];
    const std::uint32_t cb = counts[static_cast<std::size_t>(b)];
    return ca > cb || (ca == cb && a < b);
  });
  place_overflow(overflow, cap, order, out);
}

}  // namespace epsim::workloads
