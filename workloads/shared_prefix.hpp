// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shared system prompts ([workload.shared_prefix]): a set of distinct prompts, each with a length drawn
// once per run, chosen by Zipf popularity (prompt k, from 0, with probability proportional to
// 1 / (k + 1)^s; s = 0 is uniform), carried by a fraction of requests (or of sessions, by all their
// turns). A request that carries prompt k begins with the segment {content_id(system_prompt, k), its
// length}.
#include <boost/random/discrete_distribution.hpp>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/params.hpp"
#include "core/random_streams.hpp"
#include "workloads/length_distribution.hpp"
#include "workloads/request.hpp"

namespace epsim::workloads {

/// The most distinct shared prompts (their lengths and popularity table are held for the run).
inline constexpr std::int64_t k_max_shared_prompts = std::int64_t{1} << 20;

struct SharedPrefixConfig {
  std::int64_t prompts = 0;   ///< distinct system prompts (0: none, the feature is off)
  LengthDistribution tokens;  ///< each prompt's length, drawn once per prompt
  double zipf_s = 1.0;        ///< popularity exponent over the prompts
  double fraction = 1.0;      ///< of requests (sessions) that carry one

  bool enabled() const { return prompts > 0; }
};

SharedPrefixConfig parse_shared_prefix(core::ParamTable& t);

/// A run's prompts: lengths from the "shared_prefix_lengths" stream, choices from the caller's stream.
class SharedPrefixes {
 public:
  SharedPrefixes(const SharedPrefixConfig& cfg, const core::RandomStreams& streams);
  /// The prompt a new request (session) carries, or nullopt for one that carries none: one uniform draw
  /// against `fraction`, then (when it carries one) one Zipf draw.
  std::optional<std::int64_t> pick(core::Rng& rng);
  /// Prompt k's segment.
  ContentSegment segment(std::int64_t k) const;
  std::int64_t length(std::int64_t k) const { return lengths_[static_cast<std::size_t>(k)]; }

 private:
  double fraction_;
  std::vector<std::int64_t> lengths_;
  boost::random::discrete_distribution<std::int64_t, double> popularity_;
};

}  // namespace epsim::workloads
