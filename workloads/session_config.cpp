// SPDX-License-Identifier: Apache-2.0
#include "workloads/session_config.hpp"

#include <fmt/format.h>

#include <array>
#include <span>

#include "core/presets.hpp"
#include "workloads/content_id.hpp"
#include "workloads/request.hpp"

namespace epsim::workloads {

std::span<const core::EmbeddedFile> embedded_sessions();

namespace {
const core::PresetCatalog& presets() {
  static const core::PresetCatalog catalog("sessions", embedded_sessions());
  return catalog;
}
}  // namespace

std::vector<std::string> session_preset_names() {
  return presets().names();
}

SessionConfig parse_sessions(core::ParamTable& t) {
  using Kind = SessionConfig::Kind;
  const std::string preset =
      t.string("preset", "", "defaults for the keys below: chat or agent (docs/workloads.md), or a .toml file");
  if (!preset.empty()) {
    t.add_layer(core::preset_layer(t, "preset", presets(), preset));
  }
  static constexpr std::array<core::Choice<Kind>, 3> kinds{
      {{"none", Kind::none}, {"synthetic", Kind::synthetic}, {"sharegpt", Kind::sharegpt}}};
  SessionConfig c;
  c.kind = t.choice<Kind>("kind", Kind::none,
                          "none (open loop), synthetic (drawn turns) or sharegpt (a conversation file's turns)", kinds);
  auto turns = t.table("turns", "synthetic: turns per session, the opening one included");
  c.turns = parse_length_distribution(turns, 4, "turns");
  if (c.turns.largest() > k_max_session_turns) {
    turns.fail(c.turns.kind == LengthDistribution::Kind::fixed ? "value" : "max",
               fmt::format("a session has at most {} turns", k_max_session_turns));
  }
  auto message = t.table("message_tokens", "synthetic: each later turn's new user message (tool output)");
  c.message_tokens = parse_length_distribution(message, 256);
  auto answer = t.table("answer_tokens", "synthetic: each later turn's answer (tool call)");
  c.answer_tokens = parse_length_distribution(answer, 256);
  auto think = t.table("think_time_s", "from a turn's finish to its session's next arrival");
  c.think_time = parse_think_time(think, 10.0);
  c.max_context_tokens =
      t.integer("max_context_tokens", 131072, "a session ends before a turn whose prompt would be longer",
                {1, k_max_request_tokens});
  c.file = t.string("file", "", "sharegpt: the conversation file (JSON list of {id, conversations})");
  c.chars_per_token =
      t.real("chars_per_token", 4.0, "sharegpt: characters per token of the length estimate", {0.5, 100.0});
  if (!t.documenting() && c.kind == Kind::sharegpt && c.file.empty()) {
    t.fail("file", "kind = \"sharegpt\" needs the conversation file");
  }
  if (!t.documenting() && c.kind != Kind::sharegpt && !c.file.empty()) {
    t.fail("file", "a conversation file is read with kind = \"sharegpt\" only");
  }
  t.finish();
  return c;
}

}  // namespace epsim::workloads
