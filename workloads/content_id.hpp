// SPDX-License-Identifier: Apache-2.0
#pragma once
// The identities of prompt segments (ContentSegment::id) the synthetic and conversation workloads
// make: a purpose tag in the top byte above a 56-bit value, through the SplitMix64 finaliser
// (core::mix64). The finaliser is a bijection on 64-bit words, so two different (purpose, value)
// pairs never give the same id; and no id is 0 ("no content"): mix64 maps only 0x61c8864680b583eb to
// 0, whose tag 0x61 is no purpose's.
#include <cstdint>

namespace epsim::workloads {

enum class ContentPurpose : std::uint8_t {
  system_prompt = 1,   ///< value: the shared system prompt's index
  user_message = 2,    ///< value: (session << 16) | turn
  answer = 3,          ///< value: (session << 16) | turn
  request_prompt = 4,  ///< value: a request's id (its own prompt part, shared with nothing)
  file_system = 5,     ///< value: 56 bits of a conversation file's system message text hash
};

/// The most turns one session may have: turn numbers take the low 16 bits of a segment's value.
inline constexpr int k_max_session_turns = 1 << 15;
/// The most sessions a run may start (session numbers take 40 bits of a segment's value).
inline constexpr std::int64_t k_max_sessions = std::int64_t{1} << 40;

/// The id of a segment: mix64((purpose << 56) | (value mod 2^56)).
std::uint64_t content_id(ContentPurpose purpose, std::uint64_t value);
/// content_id of a session's turn: value (session << 16) | turn.
std::uint64_t turn_content_id(ContentPurpose purpose, std::int64_t session, int turn);

}  // namespace epsim::workloads
