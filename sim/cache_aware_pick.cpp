// SPDX-License-Identifier: Apache-2.0
#include "sim/cache_aware_pick.hpp"

#include <algorithm>

namespace epsim::serving {

std::pair<std::size_t, int> pick_cache_aware(const CacheAwareConfig& cfg, std::span<const Scheduler* const> groups,
                                             const workloads::RequestSpec& spec, std::int64_t block_tokens) {
  std::size_t lo = 0;
  std::size_t hi = 0;
  bool first = true;
  for (const Scheduler* sch : groups) {
    for (int r = 0; r < sch->ranks(); ++r) {
      const std::size_t load = sch->outstanding(r);
      lo = first ? load : std::min(lo, load);
      hi = first ? load : std::max(hi, load);
      first = false;
    }
  }
  const bool imbalanced = hi - lo > static_cast<std::size_t>(cfg.balance_abs_threshold) &&
                          static_cast<double>(hi) > cfg.balance_rel_threshold * static_cast<double>(lo);
  // One pass: the least loaded, the longest match, the emptiest cache; ties to the first rank seen.
  std::pair<std::size_t, int> least{0, 0};
  std::pair<std::size_t, int> matched{0, 0};
  std::pair<std::size_t, int> roomiest{0, 0};
  std::size_t least_load = 0;
  std::int64_t best_match = -1;
  std::int64_t fewest_blocks = 0;
  bool seen = false;
  const std::int64_t max_blocks = (spec.prompt_tokens - 1) / block_tokens;
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const Scheduler& sch = *groups[gi];
    for (int r = 0; r < sch.ranks(); ++r) {
      const std::size_t load = sch.outstanding(r);
      const std::int64_t blocks = sch.prefix_cache(r).cached_blocks();
      if (!seen || load < least_load) {
        least = {gi, r};
        least_load = load;
      }
      if (!imbalanced) {
        const std::int64_t match = sch.prefix_cache(r).peek(spec, max_blocks);
        if (match > best_match) {
          matched = {gi, r};
          best_match = match;
        }
        if (!seen || blocks < fewest_blocks) {
          roomiest = {gi, r};
          fewest_blocks = blocks;
        }
      }
      seen = true;
    }
  }
  if (imbalanced) {
    return least;
  }
  const double share = static_cast<double>(best_match * block_tokens) /
                       static_cast<double>(std::max<std::int64_t>(1, spec.prompt_tokens));
  return share > cfg.cache_threshold ? matched : roomiest;
}

}  // namespace epsim::serving
