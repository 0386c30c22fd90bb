// SPDX-License-Identifier: Apache-2.0
#pragma once
// The turns of closed-loop sessions ([workload.sessions]). A session's turn t has the prompt
//   [shared system prompt] [file's system message] user_0 answer_0 ... user_{t-1} answer_{t-1} user_t
// (each a ContentSegment: user_i is content_id(user_message, session, i), answer_i is content_id(answer,
// session, i), which is turn i's output_content_id) and arrives a think time after turn t-1 finished.
// A synthetic session draws its turn count from the stream ("sessions", session << 16) and turn t's
// think time, new message and answer lengths (in that order) from ("sessions", session << 16 | t):
// every turn is the same whatever order the simulator finishes turns in.
#include <optional>
#include <vector>

#include "core/random_streams.hpp"
#include "workloads/request.hpp"
#include "workloads/session_config.hpp"
#include "workloads/sharegpt_reader.hpp"

namespace epsim::workloads {

class SessionSource {
 public:
  /// Reads the conversation file of a sharegpt session config (core::Error naming the file on a bad one).
  SessionSource(const SessionConfig& cfg, const core::RandomStreams& streams);
  /// Whether another session may start (a conversation file has conversations left).
  bool can_start() const;
  /// Makes `r` the opening turn of the next session: `r.prompt_tokens` (a synthetic session's own first
  /// message, replaced by the file's for sharegpt) follows the `head` segments, and `r.output_tokens`
  /// is kept (replaced by the file's answer for sharegpt).
  void open(RequestSpec& r, const std::vector<ContentSegment>& head);
  /// The turn after `done`, arriving a think time after `finish_ns`; nullopt when `done` was its
  /// session's last turn or the next prompt would exceed max_context_tokens. Its id is left to the caller.
  std::optional<RequestSpec> next_turn(const RequestSpec& done, core::Time finish_ns) const;
  /// A synthetic session's turn count.
  std::int64_t turns_of(std::int64_t session) const;

 private:
  core::Rng turn_rng(std::int64_t session, int turn) const;

  SessionConfig cfg_;
  core::RandomStreams streams_;
  ConversationSet file_;  // sharegpt only
  std::int64_t started_ = 0;
};

}  // namespace epsim::workloads
