// SPDX-License-Identifier: Apache-2.0
#pragma once
// One multinomial draw of `picks` items over categories with probabilities `p`, by conditional binomials
// in the given `order` (most probable first stops early once every pick is placed). No category may
// exceed `cap` (a token picks distinct experts): any excess is passed to the next categories in order.
#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "core/random_streams.hpp"
#include "workloads/alias_table.hpp"

namespace epsim::workloads {

/// How a layer whose picks far outnumber its experts draws its counts (routing.sampling, synthetic or
/// replayed): exact by conditional binomials; poisson: exact as well, by Poissonisation, vectorised
/// (workloads/poisson_multinomial.hpp: other random numbers, faster with AVX2 or AVX-512); fast:
/// conditional binomials of variance >= 25 from their moment-matched normal (approximate, opt-in).
enum class RoutingSampling : std::uint8_t { exact, poisson, fast };

/// A draw of more than four picks per category: there one conditional binomial (or Poisson variate) per
/// category costs less than one alias pick per pick, so the large-draw methods take over.
inline bool is_large_draw(std::int64_t picks, std::size_t categories) {
  return picks > 4 * static_cast<std::int64_t>(categories);
}

/// Draws picks one by one from the alias table for small draws (picks <= 4 x categories) and by
/// conditional binomials otherwise; both are exact multinomial draws. `alias` is a reusable workspace.
/// With `approximate`, a conditional binomial B(n, q) whose variance n q (1 - q) is at least 25 is drawn as
/// round(N(n q, n q (1 - q))) clamped to [0, n] (moment-matched normal); smaller ones stay exact.
void multinomial_capped(core::Rng& rng, std::int64_t picks, std::int64_t cap, std::span<const double> p,
                        std::span<const int> order, std::span<std::int32_t> out, AliasTable& alias,
                        bool approximate = false);
void multinomial_capped(core::Rng& rng, std::int64_t picks, std::int64_t cap, std::span<const double> p,
                        std::span<const int> order, std::span<std::int32_t> out, bool approximate = false);

/// The same multinomial without an order up front (the counts' distribution does not depend on the order
/// the conditional binomials walk): categories in index order, and only when a count was clipped at `cap`
/// is `order` sorted (most probable first, ties to the lower index) to place the clipped picks. For
/// distributions that change every step (trace replay), where sorting each layer cost a third of the run.
/// `approximate` as for multinomial_capped.
void multinomial_capped_unsorted(core::Rng& rng, std::int64_t picks, std::int64_t cap, std::span<const double> p,
                                 std::span<std::int32_t> out, AliasTable& alias, std::vector<int>& order,
                                 bool approximate = false);

/// Categories most probable first, ties to the lower index (the order clipped picks are placed in).
void sort_by_probability(std::span<const double> p, std::vector<int>& order);
/// Clips every count at `cap`; returns the picks clipped off.
std::int64_t clip_at_cap(std::span<std::int32_t> out, std::int64_t cap);

/// Places `overflow` picks clipped at `cap` on the earliest categories of `order` that still have room.
void place_overflow(std::int64_t overflow, std::int64_t cap, std::span<const int> order, std::span<std::int32_t> out);

/// Tallies `picks` draws of `draw()` (an expert id) into `out`, at most `cap` per expert; picks past an
/// expert's cap go, after all the draws, to the earliest experts in `order` that still have room (as
/// multinomial_capped does).
template <class Draw>
void tally_capped(std::int64_t picks, std::int64_t cap, std::span<const int> order, std::span<std::int32_t> out,
                  Draw&& draw) {
  std::fill(out.begin(), out.end(), 0);
  std::int64_t overflow = 0;
  for (std::int64_t i = 0; i < picks; ++i) {
    std::int32_t& c = out[static_cast<std::size_t>(draw())];
    if (c < cap) {
      ++c;
    } else {
      ++overflow;
    }
  }
  place_overflow(overflow, cap, order, out);
}

/// Caps probabilities at `cap` by water-filling (the excess is shared by the others in proportion to
/// their mass); `p` sums to 1 before and after. Needs cap * size >= 1.
void water_fill_cap(std::span<double> p, double cap);

}  // namespace epsim::workloads
