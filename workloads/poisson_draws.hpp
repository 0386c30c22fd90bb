// SPDX-License-Identifier: Apache-2.0
#pragma once
// Independent Poisson draws, several lanes at a time, exact: inversion below a mean of 10 and Hörmann's
// transformed rejection with squeeze (PTRS; W. Hörmann, "The transformed rejection method for generating
// Poisson random variables", Insurance: Mathematics and Economics 12, 1993) from 10 up. Each category
// draws its uniforms from its own counters (core/lane_random.hpp) and the lane arithmetic is exact element
// by element (core/lane_math.hpp), so every dispatch path (2, 4 or 8 lanes) returns the same counts.
#include <cstdint>
#include <span>
#include <vector>

#include "core/isa.hpp"
#include "core/random_streams.hpp"

namespace epsim::workloads {

/// Reused buffers: drawing allocates nothing once they have grown to the largest input.
class PoissonDraws {
 public:
  /// out[i] ~ Poisson(mean[i]) (mean 0 or less: 0). Means must be finite and below 2^50.
  /// Takes one output of `rng` per call, the key of the counter-based uniforms (core/lane_random.hpp):
  /// the draw of category i is a function of the key, i and mean[i] alone, so the vector width of the
  /// path changes nothing.
  void draw(core::Rng& rng, std::span<const double> mean, std::span<std::int64_t> out,
            core::Isa isa = core::active_isa());

 private:
  std::vector<std::int32_t> small_;  // indices of means in (0, 10)
  std::vector<std::int32_t> large_;  // indices of means >= 10
  std::vector<double> params_;       // PTRS: six parameters per large mean
  std::vector<std::int32_t> lists_;  // PTRS: the categories drawing, the next round's, the exact tests'
  std::vector<double> slow_;         // PTRS: each round's k, |U| margin and V, for the exact tests
};

}  // namespace epsim::workloads
