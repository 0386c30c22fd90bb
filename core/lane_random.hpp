// SPDX-License-Identifier: Apache-2.0
#pragma once
// Uniforms for vector kernels, from counters: output n of SplitMix64 started at `key` (G. Steele, D. Lea,
// C. Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014; the generator behind Java's
// SplittableRandom) is a fixed function of key + (n + 1) x 0x9E3779B97F4A7C15, so every lane computes its
// own numbers from its own counters, with no serial engine between lanes. A draw then depends on its
// lane's counters alone, not on the width or grouping of the vectors: kernels may batch lanes however
// suits the machine. The key comes from the caller's core::Rng. Only integer and IEEE-exact operations
// (core/lane_math.hpp).
#include <bit>
#include <cstdint>

#include "core/lane_math.hpp"

namespace epsim::core::lane {

/// Uniforms in (0, 1) (52 bits and half a step: never 0 or 1) at the given counters.
template <class D>
[[gnu::always_inline]] inline D uniforms_at(std::uint64_t key, typename Lanes<D>::U counter) {
  using U = typename Lanes<D>::U;
  U z = key + (counter + 1) * 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return (std::bit_cast<D>((z >> 12) | 0x3FF0000000000000ULL) - 1.0) + 0x1p-53;
}

}  // namespace epsim::core::lane
