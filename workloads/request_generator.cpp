// SPDX-License-Identifier: Apache-2.0
#include "workloads/request_generator.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "workloads/content_id.hpp"
#include "workloads/sessions.hpp"
#include "workloads/workload_bounds.hpp"

namespace epsim::workloads {

namespace {

// What the arrivals will be: a count that fits in memory, and at least one request inside simulated time
// (a run that generates none measured nothing but exited 0).
void check_request_count(core::ParamTable& t, const WorkloadConfig& c) {
  const double rate = c.arrivals.rate_rps;
  if (c.duration_s > 0.0 && c.num_requests == 0) {
    const double expected = rate * c.duration_s;
    if (expected > static_cast<double>(k_max_requests)) {
      t.fail("duration_s", fmt::format("rate_rps x duration_s = {:g} requests, more than the {} a run may generate",
                                       expected, k_max_requests));
    }
    if (expected < 1.0) {
      t.fail("duration_s",
             fmt::format("rate_rps x duration_s = {:g}: fewer than one request is expected to arrive", expected));
    }
  }
  if (c.num_requests > 0 && c.duration_s == 0.0 && static_cast<double>(c.num_requests) / rate > core::k_max_time_s) {
    t.fail("num_requests",
           fmt::format("{} requests at {:g} req/s arrive over ~{:g} s, past the {:g} s of simulated "
                       "time a run may last",
                       c.num_requests, rate, static_cast<double>(c.num_requests) / rate, core::k_max_time_s));
  }
}

}  // namespace

WorkloadConfig parse_workload(core::ParamTable& t) {
  WorkloadConfig c;
  c.arrivals = parse_arrivals(t);
  // A replayed file is replayed whole unless num_requests says otherwise (stopping at a default count
  // would silently drop the rest of it).
  const bool replay = c.arrivals.kind == ArrivalConfig::Kind::replay;
  c.num_requests =
      t.optional_integer("num_requests", "200; every row of a replayed file",
                         "requests to generate (0 = limited by duration_s); at most 1e7, and rate_rps x duration_s too",
                         {0, k_max_requests})
          .value_or(replay ? 0 : 200);
  c.duration_s = t.real("duration_s", 0.0, "generate arrivals for this many seconds (0 = limited by num_requests)",
                        core::k_time_s);
  if (!t.documenting() && !replay) {
    check_request_count(t, c);
  }
  auto prompt = t.table("prompt_tokens", "prompt length distribution");
  c.prompt = parse_length_distribution(prompt, 1024);
  auto output = t.table("output_tokens", "output length distribution");
  c.output = parse_length_distribution(output, 128);
  auto shared = t.table("shared_prefix", "system prompts shared by a fraction of requests (docs/workloads.md)");
  c.shared_prefix = parse_shared_prefix(shared);
  auto sessions = t.table("sessions", "closed-loop multi-turn sessions (docs/workloads.md)");
  c.sessions = parse_sessions(sessions);
  // A replayed file, and a conversation file, end the workload by themselves.
  if (!t.documenting() && c.num_requests == 0 && c.duration_s == 0.0 &&
      c.arrivals.kind != ArrivalConfig::Kind::replay && c.sessions.kind != SessionConfig::Kind::sharegpt) {
    t.fail("num_requests", "set num_requests or duration_s (both are 0: the workload would never end)");
  }
  if (!t.documenting() && c.shared_prefix.enabled() && !replay &&
      c.shared_prefix.tokens.largest() + c.prompt.largest() > k_max_request_tokens) {
    shared.fail("tokens", fmt::format("a shared prompt and a request's own prompt may add up to {} tokens, more "
                                      "than the {} a request may have",
                                      c.shared_prefix.tokens.largest() + c.prompt.largest(), k_max_request_tokens));
  }
  t.finish();
  return c;
}

RequestGenerator::RequestGenerator(const WorkloadConfig& cfg, const core::RandomStreams& streams)
    : cfg_(cfg),
      arrivals_(cfg.arrivals, streams.stream("arrivals")),
      length_rng_(streams.stream("lengths")),
      prefix_rng_(streams.stream("shared_prefix")) {
  if (cfg_.shared_prefix.enabled()) {
    prefixes_.emplace(cfg_.shared_prefix, streams);
  }
  if (cfg_.sessions.enabled()) {
    sessions_ = std::make_unique<SessionSource>(cfg_.sessions, streams);
  }
  if (cfg_.arrivals.kind == ArrivalConfig::Kind::replay) {
    replay_ = std::make_unique<RequestTrace>(cfg_.arrivals.replay_file, cfg_.arrivals.replay);
  }
}

RequestGenerator::~RequestGenerator() = default;

std::optional<RequestSpec> RequestGenerator::next_replayed() {
  std::optional<RequestSpec> r = replay_->next();
  if (r && r->prompt_tokens == 0) {  // an arrival-only CSV row: lengths from the distributions
    r->prompt_tokens = cfg_.prompt.sample(length_rng_);
    r->output_tokens = cfg_.output.sample(length_rng_);
  }
  return r;
}

bool RequestGenerator::at_count_limit() const {
  return (cfg_.num_requests > 0 && issued_ >= cfg_.num_requests) || issued_ >= k_max_requests;
}

void RequestGenerator::add_content(RequestSpec& r) {
  std::vector<ContentSegment> head;
  if (prefixes_) {
    SharedPrefixes& prefixes = *prefixes_;
    if (const std::optional<std::int64_t> k = prefixes.pick(prefix_rng_)) {
      head.push_back(prefixes.segment(*k));
    }
  }
  if (sessions_) {
    sessions_->open(r, head);
    ++open_sessions_;
  } else if (!head.empty()) {
    if (head[0].tokens + r.prompt_tokens > k_max_request_tokens) {  // a replayed row's own prompt
      throw core::Error(
          fmt::format("request {}: {} prompt tokens with its shared system prompt of {}, more than "
                      "the {} a request may have",
                      r.id, r.prompt_tokens, head[0].tokens, k_max_request_tokens));
    }
    if (r.content.empty()) {
      r.content = {head[0],
                   {content_id(ContentPurpose::request_prompt, static_cast<std::uint64_t>(r.id)), r.prompt_tokens}};
    } else {
      r.content.insert(r.content.begin(), head[0]);  // a trace row's own blocks (Mooncake) follow it
    }
    r.prompt_tokens += head[0].tokens;
  }
}

std::optional<RequestSpec> RequestGenerator::next() {
  if (at_count_limit() || (sessions_ && !sessions_->can_start())) {
    return std::nullopt;
  }
  std::optional<RequestSpec> r;
  if (replay_) {
    r = next_replayed();
  } else {
    r.emplace();
    r->arrival_ns = arrivals_.next();
    r->prompt_tokens = cfg_.prompt.sample(length_rng_);
    r->output_tokens = cfg_.output.sample(length_rng_);
  }
  if (!r || (cfg_.duration_s > 0.0 && r->arrival_ns > core::from_seconds(cfg_.duration_s))) {
    return std::nullopt;
  }
  r->id = issued_++;
  add_content(*r);
  return r;
}

std::optional<RequestSpec> RequestGenerator::follow_up(const RequestSpec& done, core::Time finish_ns) {
  if (done.session < 0 || !sessions_) {
    return std::nullopt;
  }
  std::optional<RequestSpec> r;
  if (!at_count_limit()) {
    r = sessions_->next_turn(done, finish_ns);
  }
  if (r && cfg_.duration_s > 0.0 && r->arrival_ns > core::from_seconds(cfg_.duration_s)) {
    r.reset();
  }
  if (!r) {
    --open_sessions_;
    return std::nullopt;
  }
  r->id = issued_++;
  return r;
}

void RequestGenerator::end_session(const RequestSpec& r) {
  if (r.session >= 0 && sessions_) {
    --open_sessions_;
  }
}

}  // namespace epsim::workloads
