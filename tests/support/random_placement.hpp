// SPDX-License-Identifier: Apache-2.0
#pragma once
// A random layer placement for routing tests: every expert once, the remaining slots filled with random
// experts (replicas) or left empty (-1), shuffled over the GPUs.
#include <boost/random/uniform_int_distribution.hpp>
#include <vector>

#include "policies/placement.hpp"

namespace epsim::test {

template <class Rng>
policies::LayerPlacement random_placement(Rng& rng, int experts, int gpus, int slots_per_gpu) {
  const auto uniform = [&](int lo, int hi) { return boost::random::uniform_int_distribution<int>(lo, hi)(rng); };
  std::vector<int> phy2log(static_cast<std::size_t>(gpus) * static_cast<std::size_t>(slots_per_gpu));
  for (std::size_t i = 0; i < phy2log.size(); ++i) {
    phy2log[i] = static_cast<int>(i) < experts ? static_cast<int>(i) : uniform(-1, experts - 1);
  }
  for (int i = static_cast<int>(phy2log.size()) - 1; i > 0; --i) {
    std::swap(phy2log[static_cast<std::size_t>(i)], phy2log[static_cast<std::size_t>(uniform(0, i))]);
  }
  return policies::make_layer_placement(experts, gpus, slots_per_gpu, std::move(phy2log));
}

}  // namespace epsim::test
