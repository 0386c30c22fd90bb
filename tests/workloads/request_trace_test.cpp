// SPDX-License-Identifier: Apache-2.0
// The request-trace readers (Mooncake, Azure, BurstGPT, epsim's CSV) on hand-written files whose requests
// are worked out by hand, their errors, the replay window and speed-up, and `epsim workload stats`.
#include <unistd.h>

#include <toml++/toml.h>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "core/params.hpp"
#include "workloads/request_generator.hpp"
#include "workloads/request_trace.hpp"
#include "workloads/request_trace_stats.hpp"

using namespace epsim;
using workloads::ContentSegment;
using workloads::ReplayOptions;
using workloads::RequestSpec;
using workloads::RequestTrace;
using workloads::TraceFormat;

namespace {

std::string data(const std::string& name) {
  return std::string(EPSIM_TEST_DATA_DIR) + "/request_traces/" + name;
}

std::vector<RequestSpec> read_all(const std::string& file, const ReplayOptions& o) {
  RequestTrace t(file, o);
  std::vector<RequestSpec> out;
  while (auto r = t.next()) {
    out.push_back(std::move(*r));
  }
  return out;
}

ReplayOptions format(TraceFormat f) {
  ReplayOptions o;
  o.format = f;
  return o;
}

// A scratch file holding `text`, removed at the end of the test.
struct Scratch {
  std::filesystem::path path;
  explicit Scratch(const std::string& ext)
      : path(std::filesystem::temp_directory_path() / ("epsim_request_trace_" + std::to_string(::getpid()) + ext)) {}
  ~Scratch() { std::filesystem::remove(path); }
  std::string write(const std::string& text) const {
    std::ofstream(path, std::ios::trunc) << text;
    return path.string();
  }
};

}  // namespace

TEST_CASE("mooncake rows: timestamps in ms, hash ids as 512-token blocks, the last the remainder") {
  const auto rows = read_all(data("mooncake_3.jsonl"), format(TraceFormat::mooncake));
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].arrival_ns == 0);
  CHECK(rows[1].arrival_ns == 500'000'000);  // 500 ms
  CHECK(rows[2].arrival_ns == 2'000'000'000);
  CHECK(rows[0].prompt_tokens == 1100);
  CHECK(rows[0].output_tokens == 10);
  CHECK(rows[1].output_tokens == 20);
  // 1100 = 512 + 512 + 76; 1300 = 512 + 512 + 276; 600 = 512 + 88.
  CHECK(rows[0].content == std::vector<ContentSegment>{{1, 512}, {2, 512}, {3, 76}});
  CHECK(rows[1].content == std::vector<ContentSegment>{{1, 512}, {2, 512}, {4, 276}});
  CHECK(rows[2].content == std::vector<ContentSegment>{{1, 512}, {5, 88}});
  // Another block size splits the same rows otherwise, and must agree with the ids' count: 1100 tokens in
  // blocks of 1024 are 2 blocks, the row has 3 ids.
  ReplayOptions big = format(TraceFormat::mooncake);
  big.block_tokens = 1024;
  RequestTrace t(data("mooncake_3.jsonl"), big);
  REQUIRE_THROWS_WITH(t.next(), Catch::Contains("mooncake_3.jsonl: line 1: input_length 1100 in blocks of 1024 "
                                                "tokens (replay_block_tokens) needs 2 hash_ids, the row has 3"));
}

TEST_CASE("mooncake errors name the file and line") {
  const Scratch f(".jsonl");
  const std::string ok = R"({"timestamp": 0, "input_length": 10, "output_length": 1, "hash_ids": [7]})";
  for (const auto& [line, what] : {
           std::pair{std::string("not json"), std::string("expected one JSON object per line")},
           std::pair{std::string("[1, 2]"), std::string("expected one JSON object per line")},
           std::pair{std::string(R"({"input_length": 10, "output_length": 1, "hash_ids": [7]})"),
                     std::string("\"timestamp\" (ms since the trace's start) must be a number")},
           std::pair{std::string(R"({"timestamp": 5, "input_length": 0, "output_length": 1, "hash_ids": []})"),
                     std::string("\"input_length\" must be a whole number in [1, 4194304]")},
           std::pair{std::string(R"({"timestamp": 5, "input_length": 10, "output_length": -1, "hash_ids": [7]})"),
                     std::string("\"output_length\" must be a whole number in [1, 4194304]")},
           std::pair{std::string(R"({"timestamp": 5, "input_length": 10.5, "output_length": 1, "hash_ids": [7]})"),
                     std::string("\"input_length\" must be a whole number")},
           std::pair{std::string(R"({"timestamp": 5, "input_length": 10, "output_length": 1})"),
                     std::string("\"hash_ids\" must be an array of block ids")},
           std::pair{std::string(R"({"timestamp": 5, "input_length": 600, "output_length": 1, "hash_ids": [7]})"),
                     std::string("input_length 600 in blocks of 512 tokens (replay_block_tokens) needs 2 hash_ids, "
                                 "the row has 1")},
           std::pair{std::string(R"({"timestamp": 5, "input_length": 10, "output_length": 1, "hash_ids": [-7]})"),
                     std::string("\"hash_ids\" must hold non-negative whole numbers")},
           std::pair{std::string(R"({"timestamp": 5, "input_length": 10, "output_length": 1, "hash_ids": [[7]]})"),
                     std::string("expected a JSON object of numbers and one array (hash_ids), got deeper nesting")},
           std::pair{std::string(R"({"timestamp": -1, "input_length": 10, "output_length": 1, "hash_ids": [7]})"),
                     std::string("arrival times must be non-decreasing")},  // after the row at 0
       }) {
    INFO(line);
    // The bad row is line 3, after a good row and a blank line.
    RequestTrace t(f.write(ok + "\n\n" + line + "\n"), format(TraceFormat::mooncake));
    REQUIRE(t.next());
    REQUIRE_THROWS_WITH(t.next(), Catch::Contains(f.path.string() + ": line 3: " + what));
  }
  RequestTrace unordered(f.write(R"({"timestamp": 10, "input_length": 10, "output_length": 1, "hash_ids": [7]})"
                                 "\n" +
                                 ok + "\n"),
                         format(TraceFormat::mooncake));
  REQUIRE(unordered.next());
  REQUIRE_THROWS_WITH(unordered.next(), Catch::Contains(": line 2: arrival times must be non-decreasing"));
  // 20,000 one-token blocks: more segments than a prompt may carry.
  ReplayOptions tiny = format(TraceFormat::mooncake);
  tiny.block_tokens = 1;
  std::string ids;
  for (int i = 0; i < 20000; ++i) {
    if (i > 0) {
      ids += ',';
    }
    ids += std::to_string(i);
  }
  RequestTrace many(
      f.write(R"({"timestamp": 0, "input_length": 20000, "output_length": 1, "hash_ids": [)" + ids + "]}\n"), tiny);
  REQUIRE_THROWS_WITH(many.next(), Catch::Contains(": line 1: 20000 hash_ids: more than the 16384 segments"));
  RequestTrace empty(f.write("\n"), format(TraceFormat::mooncake));
  REQUIRE_THROWS_WITH(empty.next(), Catch::Contains(f.path.string() + ": no arrival rows (expected JSON lines"));
}

TEST_CASE("azure rows: arrivals are timestamps minus the first row's, empty requests skipped") {
  RequestTrace t(data("azure_2023.csv"), format(TraceFormat::azure));
  std::vector<RequestSpec> rows;
  while (auto r = t.next()) {
    rows.push_back(*r);
  }
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].arrival_ns == 0);
  CHECK(rows[1].arrival_ns == 4'314'579'000);   // 18:15:50.9951690 - 18:15:46.6805900
  CHECK(rows[2].arrival_ns == 14'319'410'000);  // 18:16:01.0 - 18:15:46.68059
  CHECK(rows[0].prompt_tokens == 374);
  CHECK(rows[0].output_tokens == 44);
  CHECK(rows[2].prompt_tokens == 91);
  CHECK(rows[2].output_tokens == 16);
  CHECK(rows[1].content.empty());
  CHECK(t.skipped_rows() == 1);  // the row with 0 ContextTokens
  CHECK(t.skipped_what() == "1 with 0 ContextTokens or 0 GeneratedTokens");
  // 2024's form: microseconds and a zone; across midnight, and +02:00 is two hours ahead of UTC.
  const auto y2024 = read_all(data("azure_2024.csv"), format(TraceFormat::azure));
  REQUIRE(y2024.size() == 3);
  CHECK(y2024[1].arrival_ns == 750'000'000);
  CHECK(y2024[2].arrival_ns == 1'500'000'000);
  // A leap day: 2024-02-28 23:00 to 2024-03-01 00:00 is 25 hours.
  const Scratch f(".csv");
  const auto leap =
      read_all(f.write("2024-02-28 23:00:00,1,1\n2024-03-01T00:00:00Z,1,1\n"), format(TraceFormat::azure));
  REQUIRE(leap.size() == 2);
  CHECK(leap[1].arrival_ns == std::int64_t{90000} * 1'000'000'000);
}

TEST_CASE("azure errors name the file and line") {
  const Scratch f(".csv");
  for (const auto& [text, what] : {
           std::pair{"TIMESTAMP,Context,Generated\n",
                     "line 1: expected the header TIMESTAMP,ContextTokens,GeneratedTokens"},
           std::pair{"2023-11-16 18:15:46,1\n", "line 1: expected TIMESTAMP,ContextTokens,GeneratedTokens, got"},
           std::pair{"2023-13-16 18:15:46,1,1\n", "line 1: expected a TIMESTAMP like 2023-11-16 18:15:46.6805900"},
           std::pair{"2023-11-16 18:15:46.,1,1\n", "line 1: expected a TIMESTAMP like"},
           std::pair{"2023-11-16 18:15:46 extra,1,1\n", "line 1: expected a TIMESTAMP like"},
           std::pair{"2023-11-16 18:15:46,1.5,1\n", "line 1: ContextTokens and GeneratedTokens must be whole numbers"},
           std::pair{"2023-11-16 18:15:46,-3,1\n", "line 1: ContextTokens and GeneratedTokens must be in [0, 4194304]"},
           std::pair{"# a comment\n2023-11-16 18:15:46,3,1\n2023-11-16 18:15:45,3,1\n",
                     "line 3: arrival times must be non-decreasing"},
           std::pair{"TIMESTAMP,ContextTokens,GeneratedTokens\n", "no arrival rows (expected lines TIMESTAMP"},
           // Years apart: past the simulated clock, not an overflow of nanoseconds (a fuzzer's finding).
           std::pair{"2023-11-16 18:15:46,3,1\n4046-11-16 18:15:46,3,1\n",
                     "line 2: arrival time 6.38398e+10 s is outside [0, 1e+09] s"},
           std::pair{"4046-11-16 18:15:46,3,1\n2023-11-16 18:15:46,3,1\n",
                     "line 2: arrival times must be non-decreasing"},
       }) {
    INFO(text);
    REQUIRE_THROWS_WITH(read_all(f.write(text), format(TraceFormat::azure)),
                        Catch::Contains(f.path.string() + ": " + what));
  }
}

TEST_CASE("burstgpt rows: seconds as recorded, failures skipped and counted, an optional model filter") {
  RequestTrace t(data("burstgpt.csv"), format(TraceFormat::burstgpt));
  std::vector<RequestSpec> rows;
  while (auto r = t.next()) {
    rows.push_back(*r);
  }
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].arrival_ns == 5'000'000'000);
  CHECK(rows[1].arrival_ns == 45'000'000'000);
  CHECK(rows[2].arrival_ns == 118'000'000'000);
  CHECK(rows[1].prompt_tokens == 1087);
  CHECK(rows[1].output_tokens == 230);
  CHECK(rows[2].prompt_tokens == 417);
  CHECK(t.skipped_rows() == 1);
  CHECK(t.skipped_what() == "1 failed (0 response or request tokens)");
  ReplayOptions gpt4 = format(TraceFormat::burstgpt);
  gpt4.model = "GPT-4";
  RequestTrace only(data("burstgpt.csv"), gpt4);
  const auto first = only.next();
  REQUIRE(first);
  CHECK(first->arrival_ns == 118'000'000'000);
  CHECK_FALSE(only.next());
  CHECK(only.skipped_rows() == 3);
  CHECK(only.skipped_what() == "1 failed (0 response or request tokens), 2 of other models than GPT-4");
  gpt4.model = "Claude";
  REQUIRE_THROWS_WITH(read_all(data("burstgpt.csv"), gpt4),
                      Catch::Contains("burstgpt.csv: no arrival rows (expected lines Timestamp,Model"));
}

TEST_CASE("burstgpt errors name the file and line") {
  const Scratch f(".csv");
  for (const auto& [text, what] : {
           std::pair{"Timestamp,Model,Request tokens\n", "line 1: expected the header Timestamp,Model,Request tokens,"},
           std::pair{"5,ChatGPT,472,18\n", "line 1: expected Timestamp,Model,Request tokens,Response tokens,Total"},
           std::pair{"5s,ChatGPT,472,18,490,API log\n", "line 1: Timestamp must be a number"},
           std::pair{"5,ChatGPT,472,18.5,490,API log\n", "line 1: Timestamp must be a number"},
           std::pair{"5,ChatGPT,-472,18,490,API log\n", "line 1: Request tokens and Response tokens must be in"},
           std::pair{"5,ChatGPT,472,18,490,API log\n4,ChatGPT,472,18,490,API log\n",
                     "line 2: arrival times must be non-decreasing"},
       }) {
    INFO(text);
    REQUIRE_THROWS_WITH(read_all(f.write(text), format(TraceFormat::burstgpt)),
                        Catch::Contains(f.path.string() + ": " + what));
  }
}

TEST_CASE("the replay window and speed-up: arrival = (trace time - start) / speedup") {
  ReplayOptions o = format(TraceFormat::mooncake);
  o.speedup = 2.0;
  auto rows = read_all(data("mooncake_3.jsonl"), o);
  REQUIRE(rows.size() == 3);
  CHECK(rows[1].arrival_ns == 250'000'000);  // 0.5 s / 2
  CHECK(rows[2].arrival_ns == 1'000'000'000);
  // Rows recorded in [0.4, 1.4) s: only the second, arriving 0.1 s after the window opens.
  o.speedup = 1.0;
  o.start_s = 0.4;
  o.window_s = 1.0;
  rows = read_all(data("mooncake_3.jsonl"), o);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].arrival_ns == 100'000'000);
  CHECK(rows[0].prompt_tokens == 1300);
  // [0.4, 2.4) at 4x: (0.5 - 0.4) / 4 = 0.025 s and (2.0 - 0.4) / 4 = 0.4 s.
  o.window_s = 2.0;
  o.speedup = 4.0;
  rows = read_all(data("mooncake_3.jsonl"), o);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].arrival_ns == 25'000'000);
  CHECK(rows[1].arrival_ns == 400'000'000);
  RequestTrace counted(data("mooncake_3.jsonl"), o);
  while (counted.next()) {
  }
  CHECK(counted.rows_before_window() == 1);
  // A window no row falls in is an error, not a run of nothing.
  o.start_s = 3.0;
  REQUIRE_THROWS_WITH(read_all(data("mooncake_3.jsonl"), o),
                      Catch::Contains("mooncake_3.jsonl: none of its 3 rows is inside the replay window [3, 5) s"));
}

TEST_CASE("[workload] replay_format and the replay keys reach the generator") {
  const toml::table t = toml::parse("arrival = \"replay\"\nreplay_file = \"" + data("mooncake_3.jsonl") +
                                    "\"\nreplay_format = \"mooncake\"\nreplay_speedup = 2.0\nnum_requests = 2\n");
  core::ParamTable p({core::ParamLayer{&t, "test"}}, "workload");
  const workloads::WorkloadConfig cfg = workloads::parse_workload(p);
  CHECK(cfg.arrivals.replay.format == TraceFormat::mooncake);
  workloads::RequestGenerator gen(cfg, core::RandomStreams(1));
  const auto a = gen.next();
  const auto b = gen.next();
  REQUIRE(a);
  REQUIRE(b);
  CHECK(b->id == 1);
  CHECK(b->arrival_ns == 250'000'000);
  CHECK(b->content == std::vector<ContentSegment>{{1, 512}, {2, 512}, {4, 276}});
  CHECK_FALSE(gen.next());  // num_requests
  const toml::table bad = toml::parse("arrival = \"replay\"\nreplay_file = \"x\"\nreplay_format = \"sharegpt\"\n");
  core::ParamTable pb({core::ParamLayer{&bad, "test"}}, "workload");
  REQUIRE_THROWS_AS(workloads::parse_workload(pb), core::ConfigError);
}

TEST_CASE("workload stats: counts, rate, percentiles and the ideal hit rate by hand") {
  const auto s = workloads::compute_request_trace_stats(data("mooncake_3.jsonl"), format(TraceFormat::mooncake));
  CHECK(s.requests == 3);
  CHECK(s.first_arrival_s == 0.0);
  CHECK(s.last_arrival_s == 2.0);
  CHECK(s.duration_s == 2.0);
  CHECK(s.mean_rate_rps == Approx(1.0));  // 2 gaps over 2 s
  // Prompts 600, 1100, 1300: p90 at rank 1.8 = 1100 + 0.8 x 200; p99 at 1.98.
  CHECK(s.prompt.mean == Approx(1000.0));
  CHECK(s.prompt.p50 == Approx(1100.0));
  CHECK(s.prompt.p90 == Approx(1260.0));
  CHECK(s.prompt.p99 == Approx(1296.0));
  CHECK(s.prompt.max == 1300.0);
  // Outputs 5, 10, 20.
  CHECK(s.output.mean == Approx(35.0 / 3.0));
  CHECK(s.output.p90 == Approx(18.0));
  CHECK(s.output.p99 == Approx(19.8));
  // Row 1 hits nothing; row 2 reuses blocks 1 and 2 (1024 tokens); row 3 block 1 (512): 1536 of 3000.
  CHECK(s.has_blocks);
  CHECK(s.distinct_blocks == 5);
  CHECK(s.prompt_tokens == 3000);
  CHECK(s.ideal_hit_tokens == 1536);
  CHECK(s.ideal_hit_rate == Approx(0.512));
  const std::string text = workloads::format_request_trace_stats(s);
  CHECK_THAT(text, Catch::Contains("ideal hit rate      0.5120 (1536 of 3000 prompt tokens"));
  CHECK_THAT(text, Catch::Contains("mean rate           1 req/s"));
  // Only a prompt's leading run of seen blocks counts: block 2 after an unseen block 9 is no prefix hit.
  const Scratch f(".jsonl");
  const auto prefix = workloads::compute_request_trace_stats(
      f.write(R"({"timestamp": 0, "input_length": 1024, "output_length": 1, "hash_ids": [1, 2]})"
              "\n"
              R"({"timestamp": 1, "input_length": 1024, "output_length": 1, "hash_ids": [9, 2]})"
              "\n"),
      format(TraceFormat::mooncake));
  CHECK(prefix.ideal_hit_tokens == 0);
  // The seen-id memory is bounded: 5 distinct ids exceed a bound of 4.
  REQUIRE_THROWS_WITH(
      workloads::compute_request_trace_stats(data("mooncake_3.jsonl"), format(TraceFormat::mooncake), 0, 4),
      Catch::Contains("mooncake_3.jsonl: more than 4 distinct block ids by request 3"));
  // A BurstGPT file: no blocks; the failure counted.
  const auto b = workloads::compute_request_trace_stats(data("burstgpt.csv"), format(TraceFormat::burstgpt), 2);
  CHECK(b.requests == 2);  // the cap
  CHECK_FALSE(b.has_blocks);
  CHECK(b.duration_s == 40.0);
  CHECK(b.mean_rate_rps == Approx(1.0 / 40.0));
}
