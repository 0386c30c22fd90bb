// SPDX-License-Identifier: Apache-2.0
#pragma once
// The time between a session's turn finishing and its next turn arriving (a user reading and typing,
// an agent's tool running): fixed, exponential by its mean, or lognormal by mean and coefficient of
// variation.
#include <cstdint>

#include "core/params.hpp"
#include "core/random_streams.hpp"

namespace epsim::workloads {

struct ThinkTime {
  enum class Kind : std::uint8_t { fixed, exponential, lognormal };
  Kind kind = Kind::exponential;
  double mean_s = 10.0;  ///< the mean (fixed: the value)
  double cv = 1.0;       ///< lognormal: coefficient of variation

  /// One think time, seconds.
  double sample_s(core::Rng& rng) const;
};

/// Reads a think-time table (distribution, mean_s, cv) with `default_mean_s` as the mean's default.
ThinkTime parse_think_time(core::ParamTable& t, double default_mean_s);

}  // namespace epsim::workloads
