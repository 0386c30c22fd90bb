// SPDX-License-Identifier: Apache-2.0
#pragma once
// Simulated time: integer nanoseconds. The engine never carries floating seconds; conversions happen
// at the edges (config in, reports out).
#include <cmath>
#include <cstdint>

namespace epsim::core {

using Time = std::int64_t;  ///< simulated time in nanoseconds

inline constexpr Time k_ns_per_us = 1'000;
inline constexpr Time k_ns_per_ms = 1'000'000;
inline constexpr Time k_ns_per_s = 1'000'000'000;
/// The longest simulated time, in seconds: int64 nanoseconds end at ~9.2e9 s; 1e9 s (31 years) leaves
/// room for sums of such times. Config times are bounded by it and arrivals saturate there.
inline constexpr double k_max_time_s = 1e9;

/// Rounds a duration in (fractional) nanoseconds to the engine's integer nanoseconds.
inline Time round_ns(double ns) {
  return static_cast<Time>(std::llround(ns));
}
inline Time from_seconds(double s) {
  return round_ns(s * static_cast<double>(k_ns_per_s));
}
inline Time from_ms(double ms) {
  return round_ns(ms * static_cast<double>(k_ns_per_ms));
}
inline double to_seconds(Time t) {
  return static_cast<double>(t) / static_cast<double>(k_ns_per_s);
}
inline double to_ms(Time t) {
  return static_cast<double>(t) / static_cast<double>(k_ns_per_ms);
}
inline double to_us(Time t) {
  return static_cast<double>(t) / static_cast<double>(k_ns_per_us);
}

}  // namespace epsim::core
