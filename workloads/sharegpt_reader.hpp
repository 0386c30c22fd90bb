// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reads a ShareGPT-style conversation file: a JSON list of {"id": ..., "conversations": [{"from":
// "human" | "gpt" | "system", "value": "text"}, ...]} ("user" and "assistant", "chatgpt", "bard", "bing"
// are read as human and gpt too). Streamed (a SAX parse keeps one message's text at a time), so
// memory holds only the lengths: per conversation its system message and its turns, each a user
// message (consecutive human messages together) answered by a gpt message (consecutive ones together).
// A message's tokens are estimated from its characters (Unicode code points): ceil(chars /
// chars_per_token), at least 1. A conversation's gpt messages before its first human one are skipped,
// as is a last human message nobody answered; a conversation left with no turn is skipped whole.
#include <cstdint>
#include <istream>
#include <string>
#include <vector>

namespace epsim::workloads {

/// The largest conversation file read (ShareGPT_V3_unfiltered_cleaned_split.json is ~670 MB).
inline constexpr std::uintmax_t k_max_conversation_file_bytes = std::uintmax_t{2} << 30;

struct ConversationTurn {
  std::int64_t user_tokens = 0;
  std::int64_t answer_tokens = 0;
};

struct Conversation {
  std::int64_t index = 0;          ///< its place in the file's list, from 0
  std::int64_t system_tokens = 0;  ///< the system messages before its first turn (0: none)
  std::uint64_t system_hash = 0;   ///< core::stable_hash of their text: equal texts share a segment
  std::size_t first_turn = 0;      ///< into ConversationSet::turns
  std::size_t turns = 0;
};

struct ConversationSet {
  std::vector<Conversation> conversations;  ///< those with at least one turn, in file order
  std::vector<ConversationTurn> turns;
  std::int64_t skipped = 0;  ///< conversations without a human message answered by a gpt one
};

/// Reads `path`; throws core::Error naming the file (and the conversation's index, and the message's)
/// on a file above k_max_conversation_file_bytes, JSON that is not a list of conversations, nesting
/// deeper than core::k_max_json_depth, an unknown "from", a conversation of more than
/// k_max_session_turns turns, or a file with no usable conversation.
ConversationSet read_sharegpt(const std::string& path, double chars_per_token);
/// The same from a stream; `source` names it in errors.
ConversationSet read_sharegpt(std::istream& in, const std::string& source, double chars_per_token);

}  // namespace epsim::workloads
