// SPDX-License-Identifier: Apache-2.0
#pragma once
// [workload.sessions]: closed-loop conversations. Each arrival of the [workload] arrival process starts
// a session, whose opening turn has [workload]'s prompt and output lengths; each later turn arrives a
// think time after the one before it finished, its prompt the whole conversation so far (system prompt,
// every earlier user message and answer) plus a new user message. Synthetic sessions draw their turn
// count and lengths; ShareGPT sessions replay a conversation file's message lengths.
#include <cstdint>
#include <string>

#include "core/params.hpp"
#include "workloads/length_distribution.hpp"
#include "workloads/think_time.hpp"

namespace epsim::workloads {

struct SessionConfig {
  enum class Kind : std::uint8_t { none, synthetic, sharegpt };
  Kind kind = Kind::none;
  LengthDistribution turns;                  ///< synthetic: turns per session, the opening one included
  LengthDistribution message_tokens;         ///< synthetic: each later turn's new user message
  LengthDistribution answer_tokens;          ///< synthetic: each later turn's answer
  ThinkTime think_time;                      ///< from a turn's finish to the next turn's arrival
  std::int64_t max_context_tokens = 131072;  ///< a session ends before a turn whose prompt would exceed it
  std::string file;                          ///< sharegpt: the conversation file
  double chars_per_token = 4.0;              ///< sharegpt: characters per token of the length estimate

  bool enabled() const { return kind != Kind::none; }
};

SessionConfig parse_sessions(core::ParamTable& t);
/// Names of the shipped session presets (chat, agent).
std::vector<std::string> session_preset_names();

}  // namespace epsim::workloads
