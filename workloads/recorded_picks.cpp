// SPDX-License-Identifier: Apache-2.0
#include "workloads/recorded_picks.hpp"

#include <algorithm>

#include "workloads/multinomial.hpp"

namespace epsim::workloads {

bool RecordedPicks::build(std::span<const std::uint32_t> counts) {
  std::uint64_t total = 0;
  for (const std::uint32_t c : counts) {
    total += c;
  }
  if (total == 0 || total > k_max_entries || counts.size() > 65536) {
    ids_.clear();
    return false;
  }
  // No allocation once the buffers have grown to the largest record (the step loop reuses them). The
  // expansion is branch-free: mark where each category's run starts, then entry i is the last category
  // started at or before i (empty categories start where the next one does and are passed over). Filling
  // the runs one by one mispredicted a branch per category and cost ~2.7 us a layer at 256 experts.
  ids_.resize(total);
  starts_.assign(total + 1, 0);
  std::uint64_t at = 0;
  for (const std::uint32_t c : counts) {
    ++starts_[at];
    at += c;
  }
  std::uint32_t started = 0;
  for (std::size_t i = 0; i < total; ++i) {
    started += starts_[i];
    ids_[i] = static_cast<std::uint16_t>(started - 1);
  }
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
