// SPDX-License-Identifier: Apache-2.0
#include "workloads/sessions.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "workloads/content_id.hpp"

namespace epsim::workloads {

SessionSource::SessionSource(const SessionConfig& cfg, const core::RandomStreams& streams)
    : cfg_(cfg), streams_(streams) {
  if (cfg_.kind == SessionConfig::Kind::sharegpt) {
    file_ = read_sharegpt(cfg_.file, cfg_.chars_per_token);
  }
}

bool SessionSource::can_start() const {
  if (cfg_.kind == SessionConfig::Kind::sharegpt) {
    return started_ < static_cast<std::int64_t>(file_.conversations.size());
  }
  return started_ < k_max_sessions;
}

core::Rng SessionSource::turn_rng(std::int64_t session, int turn) const {
  return streams_.stream("sessions", (static_cast<std::uint64_t>(session) << 16U) | static_cast<std::uint64_t>(turn));
}

std::int64_t SessionSource::turns_of(std::int64_t session) const {
  core::Rng rng = turn_rng(session, 0);
  return cfg_.turns.sample(rng);
}

void SessionSource::open(RequestSpec& r, const std::vector<ContentSegment>& head) {
  const std::int64_t s = started_++;
  r.session = s;
  r.turn = 0;
  r.content = head;
  if (cfg_.kind == SessionConfig::Kind::sharegpt) {
    const Conversation& c = file_.conversations[static_cast<std::size_t>(s)];
    if (c.system_tokens > 0) {
      r.content.push_back({content_id(ContentPurpose::file_system, c.system_hash), c.system_tokens});
    }
    const ConversationTurn& t = file_.turns[c.first_turn];
    r.prompt_tokens = t.user_tokens;
    r.output_tokens = t.answer_tokens;
  }
  r.content.push_back({turn_content_id(ContentPurpose::user_message, s, 0), r.prompt_tokens});
  std::int64_t total = 0;
  for (const ContentSegment& seg : r.content) {
    total += seg.tokens;
  }
  if (total > k_max_request_tokens) {
    throw core::Error(
        fmt::format("session {}: its opening prompt of {} tokens (system prompts included) is longer "
                    "than the {} a request may have",
                    s, total, k_max_request_tokens));
  }
  r.prompt_tokens = total;
  r.output_content_id = turn_content_id(ContentPurpose::answer, s, 0);
}

std::optional<RequestSpec> SessionSource::next_turn(const RequestSpec& done, core::Time finish_ns) const {
  const int t = done.turn + 1;
  core::Rng rng = turn_rng(done.session, t);
  const double think_s = cfg_.think_time.sample_s(rng);
  std::int64_t message = 0;
  std::int64_t answer = 0;
  if (cfg_.kind == SessionConfig::Kind::sharegpt) {
    const Conversation& c = file_.conversations[static_cast<std::size_t>(done.session)];
    if (static_cast<std::size_t>(t) >= c.turns) {
      return std::nullopt;
    }
    message = file_.turns[c.first_turn + static_cast<std::size_t>(t)].user_tokens;
    answer = file_.turns[c.first_turn + static_cast<std::size_t>(t)].answer_tokens;
  } else {
    if (t >= turns_of(done.session)) {
      return std::nullopt;
    }
    message = cfg_.message_tokens.sample(rng);
    answer = cfg_.answer_tokens.sample(rng);
  }
  const std::int64_t prompt = done.prompt_tokens + done.output_tokens + message;
  const double arrival_s = core::to_seconds(finish_ns) + think_s;
  if (prompt > cfg_.max_context_tokens || done.content.size() + 2 > k_max_content_segments ||
      !(arrival_s <= core::k_max_time_s)) {
    return std::nullopt;
  }
  RequestSpec r;
  r.arrival_ns = finish_ns + core::from_seconds(think_s);
  r.prompt_tokens = prompt;
  r.output_tokens = answer;
  r.content.reserve(done.content.size() + 2);
  r.content = done.content;
  r.content.push_back({done.output_content_id, done.output_tokens});
  r.content.push_back({turn_content_id(ContentPurpose::user_message, done.session, t), message});
  r.output_content_id = turn_content_id(ContentPurpose::answer, done.session, t);
  r.session = done.session;
  r.turn = t;
  return r;
}

}  // namespace epsim::workloads
