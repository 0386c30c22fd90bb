// SPDX-License-Identifier: Apache-2.0
#pragma once
// A request as the workload produces it: when it arrives, how long its prompt and answer are, and what its
// prompt is made of (which other requests' tokens it repeats: a shared system prompt, a conversation's
// history), so that a prefix cache can tell which of its tokens are already in KV memory.
#include <cstdint>
#include <vector>

#include "core/time.hpp"

namespace epsim::workloads {

/// The longest prompt or answer a request may have (4 Mi tokens, beyond any model's context): lengths
/// from configs and replayed files are checked against it, so a corrupt row cannot stall a run.
inline constexpr std::int64_t k_max_request_tokens = std::int64_t{1} << 22;

/// The most content segments one prompt may list (a Mooncake row of 4 Mi tokens in 512-token blocks has
/// 8 Ki): bounds what one replayed row may make the simulator hold.
inline constexpr std::size_t k_max_content_segments = std::size_t{1} << 14;

/// A run of tokens with one identity. Two prompts whose segment lists begin alike (same ids and lengths,
/// in order) begin with the same tokens; the id alone says nothing without the segments before it (a
/// Mooncake hash id, a system prompt's number, a conversation turn's).
struct ContentSegment {
  std::uint64_t id = 0;
  std::int64_t tokens = 0;

  friend bool operator==(const ContentSegment&, const ContentSegment&) = default;
};

struct RequestSpec {
  std::int64_t id = 0;
  core::Time arrival_ns = 0;
  std::int64_t prompt_tokens = 0;
  std::int64_t output_tokens = 0;  ///< tokens to generate, >= 1 (the first comes out of prefill)
  /// The prompt's segments, summing to prompt_tokens; empty: content no other request shares.
  std::vector<ContentSegment> content = {};
  /// The identity of the answer's tokens, which a conversation's next turn repeats after this prompt
  /// (0: an answer no later prompt repeats).
  std::uint64_t output_content_id = 0;
  std::int64_t session = -1;  ///< the conversation or agent session it is a turn of (-1: none)
  int turn = 0;               ///< its turn in that session, from 0
};

}  // namespace epsim::workloads
