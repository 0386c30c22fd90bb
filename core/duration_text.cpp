// SPDX-License-Identifier: Apache-2.0
#include "core/duration_text.hpp"

#include <fmt/format.h>

#include <cmath>

namespace epsim::core {

std::string duration_text(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0.0 || seconds > 1e12) {
    return "?";
  }
  // Rounded first: the carry from seconds into minutes (and minutes into hours) is then exact.
  const auto whole_s = static_cast<long long>(std::llround(seconds));
  if (whole_s < 60) {
    return fmt::format("{}s", whole_s);
  }
  if (whole_s < 3600) {
    return fmt::format("{}m{:02}s", whole_s / 60, whole_s % 60);
  }
  const auto whole_min = static_cast<long long>(std::llround(seconds / 60.0));
  return fmt::format("{}h{:02}m", whole_min / 60, whole_min % 60);
}

}  // namespace epsim::core
