// SPDX-License-Identifier: Apache-2.0
#pragma once
// Largest-remainder apportionment: whole units split in proportion to quotas, as routing and origin
// splits need (no unit lost, none invented, the same answer on every platform).
#include <cstdint>
#include <span>

namespace epsim::core {

/// `quota[i]` (>= 0, summing to `n` up to rounding) becomes whole shares: each gets floor(quota[i]), the
/// units left over go one each to the largest remainders (ties: lower index). Writes `share`; uses
/// `quota` as scratch (its values are lost). Does not allocate.
void apportion(std::int64_t n, std::span<double> quota, std::span<std::int32_t> share);

}  // namespace epsim::core
