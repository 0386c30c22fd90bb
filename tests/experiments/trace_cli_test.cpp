// SPDX-License-Identifier: Apache-2.0
// `epsim trace` (gen, stats, convert) and runs that replay a trace: group limits checked on per-token ids,
// and placements that count pairs of a token's experts from them.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "tests/support/cli.hpp"

namespace fs = std::filesystem;
using Catch::Contains;

namespace {
using epsim::test::cli;
const std::string k_small = std::string(EPSIM_TEST_DATA_DIR) + "/small.toml";

// Two 20-step traces of small.toml's routing in `dir`: one with every token's expert ids, one without.
std::pair<std::string, std::string> per_token_traces(const fs::path& dir) {
  const std::string ids = (dir / "ids.trace").string();
  const std::string plain = (dir / "plain.trace").string();
  REQUIRE(cli({"trace", "gen", k_small, "--out", ids, "--steps", "20", "--tokens", "16", "--token-experts"}).code == 0);
  REQUIRE(cli({"trace", "gen", k_small, "--out", plain, "--steps", "20", "--tokens", "16"}).code == 0);
  return {ids, plain};
}
}  // namespace

TEST_CASE("trace gen, stats, convert, and a run that replays the trace") {
  const fs::path dir = fs::temp_directory_path() / "epsim_cli_trace";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string trace = (dir / "mix.trace").string();
  // Mixtral-8x7B, the golden config's model: 32 MoE layers x 8 experts, top-2.
  const auto gen = cli({"trace", "gen", k_small, "--out", trace, "--steps", "200", "--tokens", "64"});
  REQUIRE(gen.code == 0);
  REQUIRE_THAT(gen.out, Contains("200 steps of 64 tokens, 32 MoE layers x 8 experts, top-2"));
  const auto stats = cli({"trace", "stats", trace, "--ep", "4", "--json", (dir / "s.json").string()});
  REQUIRE(stats.code == 0);
  REQUIRE_THAT(stats.out, Contains("200 steps"));
  REQUIRE(fs::exists(dir / "s.json"));
  const auto conv = cli({"trace", "convert", trace, (dir / "mix.csv").string()});
  REQUIRE(conv.code == 0);
  const auto back = cli({"trace", "convert", (dir / "mix.csv").string(), (dir / "back.trace").string(), "--layers",
                         "32", "--experts", "8", "--top-k", "2"});
  REQUIRE(back.code == 0);
  // Replaying: the run routes from the trace (resampled to each step's token count).
  const auto run = cli({"run", k_small, "--out", (dir / "out").string(), "--set", "routing.source=trace", "--set",
                        "routing.trace_file=\"" + trace + "\""});
  INFO(run.err);
  REQUIRE(run.code == 0);
  // The run (912 steps) outlasts the 200-step trace: it loops, and says so once.
  const std::string looped = "looped";
  REQUIRE(run.err.find(looped) != std::string::npos);
  REQUIRE(run.err.find(looped) == run.err.rfind(looped));
  // DIRECTOR's proactive re-optimisation cannot predict a trace: a warning, not silence.
  const auto director =
      cli({"validate", k_small, "--set", "policy.placement=director", "--set", "policy.rebalance=director", "--set",
           "routing.source=trace", "--set", "routing.trace_file=\"" + trace + "\""});
  REQUIRE(director.code == 0);
  REQUIRE_THAT(director.err, Contains("a replayed trace predicts nothing"));
  // A trace of another shape is a config error naming the key.
  const auto bad = cli({"validate", k_small, "--set", "model.top_k=1", "--set", "routing.source=trace", "--set",
                        "routing.trace_file=\"" + trace + "\""});
  REQUIRE(bad.code == 2);
  REQUIRE_THAT(
      bad.err,
      Contains("routing.trace_file: the trace has 32 MoE layers x 8 experts, top-2; the model has 32 x 8, top-1"));
  const auto usage = cli({"trace", "frobnicate"});
  REQUIRE(usage.code == 2);
  REQUIRE_THAT(usage.err, Contains("valid commands are: gen, stats, convert"));
  fs::remove_all(dir);
}

TEST_CASE("a generated trace of a group-limited model keeps every token within its groups") {
  const fs::path dir = fs::temp_directory_path() / "epsim_cli_trace_limited";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string trace = (dir / "ids.trace").string();
  // Mixtral's 8 experts as 4 groups of 2, a token's 2 experts from 1 group: drawn token by token.
  REQUIRE(cli({"trace", "gen", k_small, "--out", trace, "--steps", "5", "--tokens", "16", "--token-experts", "--set",
               "model.expert_groups=4", "--set", "model.topk_group=1"})
              .code == 0);
  const auto stats = cli({"trace", "stats", trace, "--groups", "4", "--topk-group", "1"});
  INFO(stats.err);
  REQUIRE(stats.code == 0);
  // 5 steps x 32 MoE layers x 16 tokens.
  REQUIRE_THAT(stats.out, Contains("2560 tokens checked (token x MoE layer), 0 over the limit (0.00 %)"));
  fs::remove_all(dir);
}

TEST_CASE("trace stats and a replaying run check per-token ids against a group limit") {
  const fs::path dir = fs::temp_directory_path() / "epsim_cli_trace_groups";
  fs::remove_all(dir);
  fs::create_directories(dir);
  // Mixtral's 8 experts, top-2; the synthetic router knows no groups, so with 4 groups of 2 and at most one
  // group per token, the tokens whose two experts sit in different groups are over the limit.
  const auto [trace, plain] = per_token_traces(dir);
  const auto stats =
      cli({"trace", "stats", trace, "--groups", "4", "--topk-group", "1", "--json", (dir / "s.json").string()});
  INFO(stats.err);
  REQUIRE(stats.code == 0);
  // 20 steps x 32 MoE layers x 16 tokens.
  REQUIRE_THAT(stats.out, Contains("group limit (at most 1 of 4 expert groups per token): 10240 tokens checked"));
  const std::string checked = "tokens checked (token x MoE layer), ";
  const auto over_at = stats.out.find(checked);
  REQUIRE(over_at != std::string::npos);
  const std::int64_t over = std::stoll(stats.out.substr(over_at + checked.size()));
  REQUIRE(over > 0);
  REQUIRE(over < 10240);
  std::ostringstream json;
  json << std::ifstream(dir / "s.json").rdbuf();
  REQUIRE_THAT(json.str(), Contains("\"tokens_over_limit\": " + std::to_string(over)));
  // Mixtral itself has no group limit: one group, nothing over it.
  const auto model = cli({"trace", "stats", trace, "--model", "mixtral-8x7b"});
  REQUIRE(model.code == 0);
  REQUIRE_THAT(model.out, Contains("10240 tokens checked (token x MoE layer), 0 over the limit (0.00 %)"));
  const auto wrong = cli({"trace", "stats", trace, "--model", "deepseek-v3"});
  REQUIRE(wrong.code == 2);
  REQUIRE_THAT(wrong.err, Contains("the model has 256 routed experts, the trace " + trace + " has 8"));
  const auto half = cli({"trace", "stats", trace, "--groups", "4"});
  REQUIRE(half.code == 2);
  REQUIRE_THAT(half.err, Contains("--groups and --topk-group go together"));
  const auto no_ids = cli({"trace", "stats", plain, "--groups", "4", "--topk-group", "1"});
  REQUIRE(no_ids.code == 0);
  REQUIRE_THAT(no_ids.out, Contains("not checked, the check needs per-token expert ids"));
  // A run of the group-limited model on the trace: it goes on, and warns once with the same count.
  const std::vector<std::string> limited = {
      "--set", "model.expert_groups=4", "--set", "model.topk_group=1",
      "--set", "routing.source=trace",  "--set", "routing.trace_file=\"" + trace + "\""};
  std::vector<std::string> args = {"run", k_small, "--out", (dir / "out").string()};
  args.insert(args.end(), limited.begin(), limited.end());
  const auto run = cli(args);
  INFO(run.err);
  REQUIRE(run.code == 0);
  REQUIRE_THAT(run.err, Contains("breaks the model's group limit (at most 1 of 4 expert groups per token): " +
                                 std::to_string(over) + " of 10240 tokens"));
  REQUIRE(run.err.find("group limit") == run.err.rfind("group limit"));
  // Without the limit, or without per-token ids, nothing to say.
  const auto unlimited = cli({"run", k_small, "--out", (dir / "out2").string(), "--set", "routing.source=trace",
                              "--set", "routing.trace_file=\"" + trace + "\""});
  REQUIRE(unlimited.code == 0);
  REQUIRE(unlimited.err.find("group limit") == std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("moetuner counts its cross-layer transitions from a trace's per-token ids, or says it cannot") {
  const fs::path dir = fs::temp_directory_path() / "epsim_cli_moetuner_trace";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto [ids, plain] = per_token_traces(dir);
  const auto run = cli({"run", k_small, "--out", (dir / "out").string(), "--set", "policy.placement=\"moetuner\"",
                        "--set", "routing.source=trace", "--set", "routing.trace_file=\"" + ids + "\""});
  INFO(run.err);
  REQUIRE(run.code == 0);
  const auto bad = cli({"run", k_small, "--out", (dir / "bad").string(), "--set", "policy.placement=\"moetuner\"",
                        "--set", "routing.source=trace", "--set", "routing.trace_file=\"" + plain + "\""});
  REQUIRE(bad.code == 2);
  REQUIRE_THAT(bad.err, Contains("routing.trace_file: the placement needs cross-layer transitions (MoETuner's), but "
                                 "the trace has no per-token top-k expert ids"));
  REQUIRE_FALSE(fs::exists(dir / "bad" / "summary.json"));
  // Without the mapping it places from the loads alone.
  const auto balance = cli({"run", k_small, "--out", (dir / "balance").string(), "--set",
                            "policy.placement=\"moetuner\"", "--set", "policy.placement_options.cross_layer=false",
                            "--set", "routing.source=trace", "--set", "routing.trace_file=\"" + plain + "\""});
  INFO(balance.err);
  REQUIRE(balance.code == 0);
  fs::remove_all(dir);
}
