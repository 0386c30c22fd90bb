// SPDX-License-Identifier: Apache-2.0
// The ShareGPT conversation reader on a tiny file whose lengths are counted by hand, its errors, and
// its conversations replayed as sessions.
#include <toml++/toml.h>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "core/params.hpp"
#include "workloads/request_generator.hpp"
#include "workloads/sharegpt_reader.hpp"

using namespace epsim;
using workloads::ContentSegment;

namespace {

const std::string k_tiny = std::string(EPSIM_TEST_DATA_DIR) + "/sharegpt/tiny.json";

workloads::ConversationSet read_text(const std::string& text) {
  std::istringstream in(text);
  return workloads::read_sharegpt(in, "t.json", 4.0);
}

}  // namespace

TEST_CASE("ShareGPT reader: turns and lengths of a tiny file, counted by hand") {
  const workloads::ConversationSet set = workloads::read_sharegpt(k_tiny, 4.0);
  // [0]: system "Be brief." 9 chars -> 3 tokens; "Hello there" 11 -> 3 answered by "Hi! How can I help
  // you?" 23 -> 6; "Tell me a joke" 14 -> 4 and "please" 6 -> 2 together 6, answered by "No." 3 -> 1; the
  // unanswered last message is dropped. [1]: only a gpt message: skipped. [2]: "héllo wörld" is 11
  // code points (13 bytes) -> 3, "ok" -> 1; its other keys ("extra", "weight") are skipped.
  REQUIRE(set.skipped == 1);
  REQUIRE(set.conversations.size() == 2);
  const workloads::Conversation& a = set.conversations[0];
  REQUIRE(a.index == 0);
  REQUIRE(a.system_tokens == 3);
  REQUIRE(a.system_hash == 0x82218ced4e7eff32ULL);  // FNV-1a of "Be brief." (Python)
  REQUIRE(a.turns == 2);
  REQUIRE(set.turns[a.first_turn].user_tokens == 3);
  REQUIRE(set.turns[a.first_turn].answer_tokens == 6);
  REQUIRE(set.turns[a.first_turn + 1].user_tokens == 6);
  REQUIRE(set.turns[a.first_turn + 1].answer_tokens == 1);
  const workloads::Conversation& c = set.conversations[1];
  REQUIRE(c.index == 2);
  REQUIRE(c.system_tokens == 0);
  REQUIRE(c.turns == 1);
  REQUIRE(set.turns[c.first_turn].user_tokens == 3);
  REQUIRE(set.turns[c.first_turn].answer_tokens == 1);
  // 2 characters per token: "Hello there" -> ceil(11 / 2) = 6.
  REQUIRE(workloads::read_sharegpt(k_tiny, 2.0).turns[0].user_tokens == 6);
}

TEST_CASE("ShareGPT reader: errors name the file, the conversation and the message") {
  REQUIRE_THROWS_WITH(read_text("{\"a\": 1}"), "t.json: expected a JSON list of conversations, got an object");
  REQUIRE_THROWS_WITH(read_text("[1]"), "t.json: conversation [0]: expected an object, got a number");
  REQUIRE_THROWS_WITH(read_text("[{\"id\": 1}]"), "t.json: conversation [0]: no \"conversations\" list");
  REQUIRE_THROWS_WITH(read_text("[{\"conversations\": \"x\"}]"),
                      "t.json: conversation [0]: \"conversations\" must be a list, got a string");
  REQUIRE_THROWS_WITH(
      read_text("[{\"conversations\": [{\"from\": \"human\", \"value\": \"a\"}, {\"from\": \"gpt\", \"value\": "
                "\"b\"}]}, {\"conversations\": [{\"from\": \"human\", \"value\": \"a\"}, {\"from\": \"robot\", "
                "\"value\": \"b\"}]}]"),
      Catch::Contains("t.json: conversation [1]: message [1]: unknown \"from\" \"robot\""));
  REQUIRE_THROWS_WITH(
      read_text("[{\"conversations\": [{\"from\": \"human\"}]}]"),
      "t.json: conversation [0]: message [0]: expected {\"from\": ..., \"value\": ...}, missing \"value\"");
  REQUIRE_THROWS_WITH(read_text("[{\"conversations\": [{\"from\": \"human\", \"value\": 3}]}]"),
                      "t.json: conversation [0]: message [0]: \"value\" must be a string, got a number");
  REQUIRE_THROWS_WITH(read_text("[{\"conversations\": [{\"from\": \"gpt\", \"value\": \"x\"}]}]"),
                      Catch::Contains("no conversation has a human message answered by a gpt message"));
  REQUIRE_THROWS_WITH(read_text("[{\"conversations\": []"), Catch::Contains("t.json: invalid JSON at byte"));
  REQUIRE_THROWS_WITH(read_text(std::string(300, '[') + std::string(300, ']')),
                      "t.json: conversation [0]: expected an object, got a list");
  // Depth inside a value the reader skips counts: in a message, in a conversation.
  REQUIRE_THROWS_WITH(read_text("[{\"conversations\": [{\"from\": \"human\", \"x\": " + std::string(300, '[') +
                                std::string(300, ']') + "}]}]"),
                      "t.json: JSON nests deeper than 256 levels");
  REQUIRE_THROWS_WITH(read_text("[{\"x\": " + std::string(300, '[') + std::string(300, ']') + "}]"),
                      "t.json: JSON nests deeper than 256 levels");
  REQUIRE_THROWS_WITH(workloads::read_sharegpt("/nonexistent/c.json", 4.0),
                      Catch::StartsWith("/nonexistent/c.json: cannot read the conversation file"));
}

TEST_CASE("ShareGPT reader: a file above the size bound is refused before it is read") {
  const std::filesystem::path big = std::filesystem::temp_directory_path() / "epsim_sharegpt_big.json";
  { std::ofstream(big).put('['); }
  std::filesystem::resize_file(big, workloads::k_max_conversation_file_bytes + 1);  // sparse: no disk used
  REQUIRE_THROWS_WITH(workloads::read_sharegpt(big.string(), 4.0),
                      Catch::Contains("2147483649 bytes, more than the 2147483648 a conversation file may have"));
  std::filesystem::remove(big);
}

TEST_CASE("ShareGPT sessions: each conversation a session of its turns, then the file ends the workload") {
  const toml::table t = toml::parse("num_requests = 0\n[sessions]\nkind = \"sharegpt\"\nfile = \"" + k_tiny +
                                    "\"\nthink_time_s = {distribution = \"fixed\", mean_s = 1.5}\n");
  core::ParamTable p({core::ParamLayer{&t, "test"}}, "workload");
  workloads::RequestGenerator gen(workloads::parse_workload(p), core::RandomStreams(1));
  const auto s0 = gen.next();
  REQUIRE(s0);
  // mix64((5 << 56) | low 56 bits of the FNV-1a of "Be brief."), mix64(2 << 56), in Python.
  REQUIRE(s0->content == std::vector<ContentSegment>{{0x2a13dbf760fdb831ULL, 3}, {0xe9fb109b840134ffULL, 3}});
  REQUIRE(s0->prompt_tokens == 6);
  REQUIRE(s0->output_tokens == 6);
  const auto s0t1 = gen.follow_up(*s0, core::from_seconds(2.0));
  REQUIRE(s0t1);
  REQUIRE(s0t1->arrival_ns == core::from_seconds(3.5));
  REQUIRE(s0t1->prompt_tokens == 6 + 6 + 6);
  REQUIRE(s0t1->output_tokens == 1);
  REQUIRE(s0t1->content.back() == ContentSegment{0x986e6ecc37a28c57ULL, 6});  // mix64(2 << 56 | 1)
  REQUIRE_FALSE(gen.follow_up(*s0t1, core::from_seconds(4.0)));
  const auto s1 = gen.next();
  REQUIRE(s1);
  REQUIRE(s1->session == 1);
  REQUIRE(s1->content == std::vector<ContentSegment>{{0x7b750af586981cbdULL, 3}});  // mix64(2 << 56 | 1 << 16)
  REQUIRE(s1->output_tokens == 1);
  REQUIRE_FALSE(gen.next());  // two usable conversations
}
