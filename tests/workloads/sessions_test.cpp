// SPDX-License-Identifier: Apache-2.0
// Shared system prompts and closed-loop sessions (issue 38): content segments checked by hand, ids
// against SplitMix64 computed outside epsim (Python, in the comments), the Zipf popularity of the
// prompts against its closed form, and sessions that do not depend on the order turns finish in.
#include <toml++/toml.h>
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <tuple>

#include "core/error.hpp"
#include "core/params.hpp"
#include "workloads/content_id.hpp"
#include "workloads/request_generator.hpp"

using namespace epsim;
using workloads::ContentSegment;

namespace {

// mix64((purpose << 56) | value), computed in Python:
//   def mix(x): x=(x+0x9e3779b97f4a7c15)%2**64; x=((x^(x>>30))*0xbf58476d1ce4e5b9)%2**64
//               x=((x^(x>>27))*0x94d049bb133111eb)%2**64; return x^(x>>31)
constexpr std::uint64_t k_system_0 = 0xc9ed992411bbb661ULL;                           // mix(1 << 56)
constexpr std::uint64_t k_request[] = {0xbdffea9473714a52ULL, 0xf5cd259c0ab648b3ULL,  // mix(4 << 56 | r)
                                       0x0399115ffa3ce3e9ULL};
constexpr std::uint64_t k_user[] = {0xe9fb109b840134ffULL, 0x986e6ecc37a28c57ULL,  // mix(2 << 56 | t)
                                    0x9b63507ed913c796ULL, 0x90697fe3eeee1d22ULL};
constexpr std::uint64_t k_answer[] = {0x0f95128795847418ULL, 0x160d5401aa35a9eaULL,  // mix(3 << 56 | t)
                                      0x900c427889454a39ULL, 0xa56ea467342754d7ULL};

workloads::WorkloadConfig parse(const std::string& text) {
  const toml::table t = toml::parse(text);
  core::ParamTable p({core::ParamLayer{&t, "test"}}, "workload");
  return workloads::parse_workload(p);
}

std::int64_t sum_tokens(const std::vector<ContentSegment>& c) {
  std::int64_t n = 0;
  for (const ContentSegment& s : c) {
    n += s.tokens;
  }
  return n;
}

}  // namespace

TEST_CASE("content ids: SplitMix64 of the tagged value, as computed by hand") {
  using workloads::ContentPurpose;
  REQUIRE(workloads::content_id(ContentPurpose::system_prompt, 0) == k_system_0);
  REQUIRE(workloads::content_id(ContentPurpose::request_prompt, 2) == k_request[2]);
  REQUIRE(workloads::turn_content_id(ContentPurpose::user_message, 0, 3) == k_user[3]);
  REQUIRE(workloads::turn_content_id(ContentPurpose::answer, 0, 1) == k_answer[1]);
  // Different purposes of one value never share an id.
  REQUIRE(workloads::content_id(ContentPurpose::user_message, 7) != workloads::content_id(ContentPurpose::answer, 7));
}

TEST_CASE("a request with a shared system prompt: the prompt, then its own part, prompt_tokens their sum") {
  workloads::WorkloadConfig cfg = parse(
      "num_requests = 3\nprompt_tokens = {value = 100}\noutput_tokens = {value = 10}\n"
      "[shared_prefix]\nprompts = 1\ntokens = {value = 500}\n");
  workloads::RequestGenerator gen(cfg, core::RandomStreams(1));
  for (std::int64_t i = 0; i < 3; ++i) {
    const auto r = gen.next();
    REQUIRE(r);
    REQUIRE(r->prompt_tokens == 600);
    REQUIRE(r->output_tokens == 10);
    REQUIRE(r->content == std::vector<ContentSegment>{{k_system_0, 500}, {k_request[i], 100}});
    REQUIRE(r->session == -1);
    REQUIRE(r->output_content_id == 0);
  }
  REQUIRE_FALSE(gen.next());
  // Without [shared_prefix] (or sessions) requests carry no content: the open-loop workload is unchanged.
  workloads::RequestGenerator plain(parse("num_requests = 1\n"), core::RandomStreams(1));
  REQUIRE(plain.next()->content.empty());
}

TEST_CASE("turn 3 of a session: system prompt, three earlier turns, the new message") {
  workloads::WorkloadConfig cfg = parse(
      "num_requests = 0\nduration_s = 1000\nrate_rps = 0.001\nprompt_tokens = {value = 100}\n"
      "output_tokens = {value = 10}\n"
      "[shared_prefix]\nprompts = 1\ntokens = {value = 500}\n"
      "[sessions]\nkind = \"synthetic\"\nturns = {value = 5}\nmessage_tokens = {value = 20}\n"
      "answer_tokens = {value = 7}\nthink_time_s = {distribution = \"fixed\", mean_s = 2.0}\n");
  workloads::RequestGenerator gen(cfg, core::RandomStreams(1));
  const auto t0 = gen.next();
  REQUIRE(t0);
  REQUIRE(t0->session == 0);
  REQUIRE(t0->turn == 0);
  REQUIRE(t0->prompt_tokens == 600);
  REQUIRE(t0->content == std::vector<ContentSegment>{{k_system_0, 500}, {k_user[0], 100}});
  REQUIRE(t0->output_content_id == k_answer[0]);
  REQUIRE(gen.sessions_open());
  const auto t1 = gen.follow_up(*t0, core::from_seconds(3.0));
  REQUIRE(t1);
  REQUIRE(t1->arrival_ns == core::from_seconds(5.0));  // finish + 2 s of think time
  const auto t2 = gen.follow_up(*t1, core::from_seconds(6.0));
  REQUIRE(t2);
  const auto t3 = gen.follow_up(*t2, core::from_seconds(9.5));
  REQUIRE(t3);
  REQUIRE(t3->turn == 3);
  REQUIRE(t3->session == 0);
  REQUIRE(t3->arrival_ns == core::from_seconds(11.5));
  // 500 + (100 + 10) + (20 + 7) + (20 + 7) + 20 = 684.
  REQUIRE(t3->prompt_tokens == 684);
  REQUIRE(t3->output_tokens == 7);
  REQUIRE(t3->content == std::vector<ContentSegment>{{k_system_0, 500},
                                                     {k_user[0], 100},
                                                     {k_answer[0], 10},
                                                     {k_user[1], 20},
                                                     {k_answer[1], 7},
                                                     {k_user[2], 20},
                                                     {k_answer[2], 7},
                                                     {k_user[3], 20}});
  REQUIRE(t3->output_content_id == k_answer[3]);
  REQUIRE(t3->id == 3);
  const auto t4 = gen.follow_up(*t3, core::from_seconds(12.0));
  REQUIRE(t4);
  REQUIRE(gen.sessions_open());
  REQUIRE_FALSE(gen.follow_up(*t4, core::from_seconds(13.0)));  // five turns
  REQUIRE_FALSE(gen.sessions_open());
}

TEST_CASE("a session ends before a turn whose prompt would pass max_context_tokens") {
  workloads::WorkloadConfig cfg = parse(
      "num_requests = 100\nprompt_tokens = {value = 100}\noutput_tokens = {value = 10}\n"
      "[sessions]\nkind = \"synthetic\"\nturns = {value = 50}\nmessage_tokens = {value = 20}\n"
      "answer_tokens = {value = 7}\nmax_context_tokens = 157\n");
  workloads::RequestGenerator gen(cfg, core::RandomStreams(1));
  const auto t0 = gen.next();
  const auto t1 = gen.follow_up(*t0, 0);  // 100 + 10 + 20 = 130
  REQUIRE(t1);
  const auto t2 = gen.follow_up(*t1, 0);  // 130 + 7 + 20 = 157: at the cap
  REQUIRE(t2);
  REQUIRE(t2->prompt_tokens == 157);
  REQUIRE_FALSE(gen.follow_up(*t2, 0));  // 184 > 157
  REQUIRE_FALSE(gen.sessions_open());
}

TEST_CASE("num_requests counts turns: no follow-up past it, and the session ends") {
  workloads::WorkloadConfig cfg = parse("num_requests = 2\n[sessions]\nkind = \"synthetic\"\nturns = {value = 10}\n");
  workloads::RequestGenerator gen(cfg, core::RandomStreams(1));
  const auto t0 = gen.next();
  const auto t1 = gen.follow_up(*t0, 0);
  REQUIRE(t1);
  REQUIRE_FALSE(gen.next());
  REQUIRE_FALSE(gen.follow_up(*t1, 0));
  REQUIRE_FALSE(gen.sessions_open());
}

TEST_CASE("a rejected turn ends its session") {
  workloads::WorkloadConfig cfg = parse("num_requests = 10\n[sessions]\nkind = \"synthetic\"\nturns = {value = 10}\n");
  workloads::RequestGenerator gen(cfg, core::RandomStreams(1));
  const auto t0 = gen.next();
  REQUIRE(gen.sessions_open());
  gen.end_session(*t0);
  REQUIRE_FALSE(gen.sessions_open());
}

TEST_CASE("shared prompts' popularity follows Zipf's closed form, and a fraction of requests carries one") {
  // 10 prompts, s = 1: prompt k with probability (1 / (k + 1)) / H_10, H_10 = 7381 / 2520.
  workloads::WorkloadConfig cfg =
      parse("num_requests = 200000\n[shared_prefix]\nprompts = 10\nzipf_s = 1.0\nfraction = 0.3\n");
  workloads::RequestGenerator gen(cfg, core::RandomStreams(7));
  std::map<std::uint64_t, std::int64_t> count;
  std::int64_t carrying = 0;
  std::int64_t n = 0;
  while (auto r = gen.next()) {
    ++n;
    if (!r->content.empty()) {
      ++carrying;
      ++count[r->content[0].id];
    }
  }
  REQUIRE(n == 200000);
  // fraction 0.3 of 200000: sd sqrt(200000 * 0.3 * 0.7) = 205; 5 sigma.
  REQUIRE(std::abs(static_cast<double>(carrying) - 60000.0) < 5 * 205.0);
  const double harmonic = 7381.0 / 2520.0;
  for (int k = 0; k < 10; ++k) {
    const double p = 1.0 / (k + 1) / harmonic;
    const double share =
        static_cast<double>(
            count[workloads::content_id(workloads::ContentPurpose::system_prompt, static_cast<std::uint64_t>(k))]) /
        static_cast<double>(carrying);
    const double sd = std::sqrt(p * (1.0 - p) / static_cast<double>(carrying));
    INFO("prompt " << k << ": share " << share << ", closed form " << p);
    REQUIRE(std::abs(share - p) < 5.0 * sd);
  }
}

TEST_CASE("sessions are the same whatever order their turns finish in") {
  const std::string text =
      "num_requests = 0\nduration_s = 100000\nrate_rps = 1.0\n"
      "prompt_tokens = {distribution = \"lognormal\", mean = 300}\n"
      "output_tokens = {distribution = \"lognormal\", mean = 50}\n"
      "[shared_prefix]\nprompts = 4\nfraction = 0.5\ntokens = {distribution = \"uniform\", min = 10, max = 900}\n"
      "[sessions]\nkind = \"synthetic\"\nturns = {distribution = \"uniform\", min = 1, max = 6}\n"
      "message_tokens = {distribution = \"lognormal\", mean = 80}\n"
      "answer_tokens = {distribution = \"lognormal\", mean = 40}\n"
      "think_time_s = {distribution = \"lognormal\", mean_s = 5.0, cv = 2.0}\n";
  using Key = std::pair<std::int64_t, int>;
  // Every turn of 20 sessions; each turn finishes 1 s after it arrived, follow-ups asked for in
  // session order (forward) or in reverse session order.
  const auto play = [&](bool reverse) {
    workloads::RequestGenerator gen(parse(text), core::RandomStreams(42));
    std::vector<workloads::RequestSpec> live;
    for (int i = 0; i < 20; ++i) {
      live.push_back(*gen.next());
    }
    std::map<Key, std::tuple<std::int64_t, std::int64_t, std::vector<ContentSegment>, std::uint64_t, core::Time>> seen;
    while (!live.empty()) {
      if (reverse) {
        std::reverse(live.begin(), live.end());
      }
      std::vector<workloads::RequestSpec> next;
      for (const workloads::RequestSpec& r : live) {
        const core::Time finish = r.arrival_ns + core::k_ns_per_s;
        seen[{r.session, r.turn}] = {r.prompt_tokens, r.output_tokens, r.content, r.output_content_id, r.arrival_ns};
        if (auto f = gen.follow_up(r, finish)) {
          REQUIRE(sum_tokens(f->content) == f->prompt_tokens);
          REQUIRE(f->arrival_ns >= finish);
          next.push_back(*f);
        }
      }
      live = next;
      if (reverse) {
        std::reverse(live.begin(), live.end());
      }
    }
    REQUIRE_FALSE(gen.sessions_open());
    return seen;
  };
  const auto forward = play(false);
  const auto backward = play(true);
  REQUIRE(forward.size() > 40);  // uniform 1..6 turns: 70 expected
  REQUIRE(forward == backward);
}

TEST_CASE("workload.sessions and workload.shared_prefix: presets and bad keys") {
  // The agent preset's defaults, overridden key by key.
  const workloads::WorkloadConfig agent = parse("[sessions]\npreset = \"agent\"\nmax_context_tokens = 65536\n");
  REQUIRE(agent.sessions.kind == workloads::SessionConfig::Kind::synthetic);
  REQUIRE(agent.sessions.turns.mean == 82.0);
  REQUIRE(agent.sessions.max_context_tokens == 65536);
  REQUIRE(parse("[sessions]\npreset = \"chat\"\n").sessions.message_tokens.values.size() == 256);
  REQUIRE_THROWS_WITH(parse("[sessions]\npreset = \"nope\"\n"), Catch::Contains("preset"));
  REQUIRE_THROWS_WITH(parse("[sessions]\nkind = \"sharegpt\"\n"), Catch::Contains("workload.sessions.file"));
  REQUIRE_THROWS_WITH(parse("[sessions]\nkind = \"synthetic\"\nturns = {value = 40000}\n"),
                      Catch::Contains("at most 32768 turns"));
  REQUIRE_THROWS_WITH(parse("[shared_prefix]\nprompts = 2\nfraction = 1.5\n"),
                      Catch::Contains("workload.shared_prefix.fraction"));
  REQUIRE_THROWS_WITH(
      parse("prompt_tokens = {value = 4000000}\n[shared_prefix]\nprompts = 2\ntokens = {value = 1000000}\n"),
      Catch::Contains("workload.shared_prefix.tokens"));
  REQUIRE_THROWS_WITH(parse("[sessions]\nthink_time_s = {distribution = \"exponential\", mean_s = 0}\n"),
                      Catch::Contains("mean_s"));
}
