// SPDX-License-Identifier: Apache-2.0
#pragma once
// Prompt / output length distributions: fixed, uniform (integers, inclusive), lognormal by mean and
// coefficient of variation (clamped to [min, max]), and empirical tables sampled with replacement
// (inline values, or a shipped table: "sharegpt-prompt", "sharegpt-output").
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/params.hpp"
#include "core/random_streams.hpp"

namespace epsim::workloads {

struct LengthDistribution {
  enum class Kind : std::uint8_t { fixed, uniform, lognormal, empirical };
  Kind kind = Kind::fixed;
  std::int64_t value = 128;          ///< fixed
  std::int64_t min = 1;              ///< uniform lower bound, lognormal clamp
  std::int64_t max = 1;              ///< uniform upper bound, lognormal clamp
  double mean = 128.0;               ///< lognormal mean
  double cv = 1.0;                   ///< lognormal coefficient of variation
  std::vector<std::int64_t> values;  ///< empirical table

  std::int64_t sample(core::Rng& rng) const;
  /// Expected value (of the unclamped distribution for lognormal).
  double expected() const;
  /// The largest length it can give (lognormal is clamped to max).
  std::int64_t largest() const;
};

/// `unit` names what the lengths count in the docs ("tokens"; "turns" for a session's turns).
LengthDistribution parse_length_distribution(core::ParamTable& t, std::int64_t default_value,
                                             std::string_view unit = "tokens");
/// Names of the shipped empirical tables.
std::vector<std::string> length_table_names();

}  // namespace epsim::workloads
