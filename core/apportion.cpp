// SPDX-License-Identifier: Apache-2.0
#include "core/apportion.hpp"

#include <algorithm>
#include <cmath>

namespace epsim::core {

void apportion(std::int64_t n, std::span<double> quota, std::span<std::int32_t> share) {
  std::int64_t given = 0;
  for (std::size_t i = 0; i < quota.size(); ++i) {
    share[i] = static_cast<std::int32_t>(std::floor(quota[i]));
    quota[i] -= share[i];  // now the remainder
    given += share[i];
  }
  for (; given < n && !quota.empty(); ++given) {
    const auto i = static_cast<std::size_t>(std::max_element(quota.begin(), quota.end()) - quota.begin());
    ++share[i];
    quota[i] = -1.0;
  }
}

}  // namespace epsim::core
