// SPDX-License-Identifier: Apache-2.0
#pragma once
// Brute force for placement tests: every assignment of `experts` experts to `gpus` GPUs that puts at
// most `capacity` experts on each, in base-`gpus` counting order; `visit(gpu_of)` sees each one.
#include <cstddef>
#include <vector>

namespace epsim::test {

template <class Visit>
void for_each_assignment(int experts, int gpus, int capacity, Visit visit) {
  std::vector<int> gpu(static_cast<std::size_t>(experts), 0);
  for (;;) {
    std::vector<int> used(static_cast<std::size_t>(gpus), 0);
    bool fits = true;
    for (const int g : gpu) {
      fits = fits && ++used[static_cast<std::size_t>(g)] <= capacity;
    }
    if (fits) {
      visit(gpu);
    }
    int e = 0;
    while (e < experts && ++gpu[static_cast<std::size_t>(e)] == gpus) {
      gpu[static_cast<std::size_t>(e++)] = 0;
    }
    if (e == experts) {
      return;
    }
  }
}

}  // namespace epsim::test
