#pragma once
// One multinomial draw of `picks` items over categories with probabilities `p`, by conditional binomials
// in the given `order` (most probable first stops early once every pick is placed). No category may
// exceed `cap` (a token picks distinct experts): any excess is passed to the next categories in order.
#include <cstdint>
#include <span>

#include "sim/core/random_streams.hpp"

namespace epsim::workloads {

void multinomial_capped(core::Rng& rng, std::int64_t picks, std::int64_t cap, std::span<const double> p,
                        std::span<const int> order, std::span<std::int32_t> out);

/// Caps probabilities at `cap` by water-filling (the excess is shared by the others in proportion to
/// their mass); `p` sums to 1 before and after. Needs cap * size >= 1.
void water_fill_cap(std::span<double> p, double cap);

}  // namespace epsim::workloads
