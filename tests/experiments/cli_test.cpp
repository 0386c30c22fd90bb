// SPDX-License-Identifier: Apache-2.0
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sim/run_logs.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/csv.hpp"

namespace fs = std::filesystem;
using Catch::Contains;

namespace {
using epsim::test::cli;
const std::string k_small = std::string(EPSIM_TEST_DATA_DIR) + "/small.toml";
}  // namespace

TEST_CASE("version and help") {
  REQUIRE_THAT(cli({"--version"}).out, Catch::StartsWith("epsim 0."));
  REQUIRE_THAT(cli({"--help"}).out, Contains("run [CONFIG]"));
  REQUIRE_THAT(cli({"run", "--help"}).out, Contains("--set"));
  REQUIRE(cli({}).code == 2);
}

TEST_CASE("list prints presets and policies with their parameters") {
  const auto r = cli({"list"});
  REQUIRE(r.code == 0);
  REQUIRE_THAT(r.out, Contains("deepseek-v3"));
  REQUIRE_THAT(r.out, Contains("mi300x"));
  REQUIRE_THAT(r.out, Contains("linear"));
  REQUIRE_THAT(r.out, Contains("even"));
  REQUIRE_THAT(r.out, Contains("gb200-nvl72"));
  REQUIRE_THAT(r.out, Contains("nvlink5"));
  REQUIRE_THAT(r.out, Contains("gem-l40"));
  // Rebalance triggers with their own options and the keys they share.
  REQUIRE_THAT(r.out, Contains("rebalance policies:"));
  REQUIRE_THAT(r.out, Contains("horizon_steps (integer in [1, 2^24]; default 50)"));
  REQUIRE_THAT(r.out, Contains("check_every_steps"));
  REQUIRE_THAT(r.out, Contains("policy.rebalance.migration (one of: auto, stop_the_world, overlapped, compute_phases"));
  const auto bad = cli({"list", "fruits"});
  REQUIRE(bad.code == 2);
  REQUIRE_THAT(bad.err, Contains("valid values are: models, gpus, clusters, links, policies"));
}

TEST_CASE("cost prints the per-layer cost curve with the active bound") {
  const auto r = cli({"cost", "--gpu", "h100", "--model", "mixtral-8x7b", "--tokens", "1,4096", "--csv"});
  REQUIRE(r.code == 0);
  // One Mixtral expert on H100: 1 token is weight-streaming (memory) bound, 4096 tokens compute-bound;
  // 4096 tokens is the roofline_test's hand-computed 2248.861 us.
  REQUIRE_THAT(r.out, Contains("\n1,1,"));
  REQUIRE_THAT(r.out, Contains(",memory,"));
  REQUIRE_THAT(r.out, Contains("4096,1,2248.86"));
  REQUIRE_THAT(r.out, Contains(",compute,"));
  const auto bad = cli({"cost", "--gpu", "h100", "--model", "mixtral-8x7b", "--tokens", "1,x"});
  REQUIRE(bad.code == 2);
  REQUIRE_THAT(bad.err, Contains("--tokens: expected a comma-separated list of at most 4096 integers in [1, 16777216], "
                                 "got \"x\""));
  const auto missing = cli({"cost", "--gpu", "h100"});
  REQUIRE(missing.code == 2);
  REQUIRE_THAT(missing.err, Contains("model"));
}

TEST_CASE("size-like options and seeds are bounded: a clear error, never a wrap-around or a hang") {
  const auto cost = cli({"cost", "--gpu", "h100", "--model", "mixtral-8x7b", "--experts-active", "1000000000"});
  CHECK(cost.code == 2);
  CHECK_THAT(cost.err, Contains("--experts-active and --local-experts must be in [0, 65536]"));
  const auto tokens = cli({"cost", "--gpu", "h100", "--model", "mixtral-8x7b", "--tokens", "1,99999999999"});
  CHECK(tokens.code == 2);
  CHECK_THAT(tokens.err, Contains("in [1, 16777216], got \"99999999999\""));
  for (const char* seed : {"-1", "1e3", "18446744073709551615", ""}) {
    INFO(seed);
    // A bad --seed is a usage error (exit 2) in every command that takes one.
    for (const char* command : {"run", "slo"}) {
      const auto r = cli({command, "--seed", seed, "--out", "/nonexistent-epsim-dir/x"});
      INFO(command);
      CHECK(r.code == 2);
      CHECK_THAT(r.err, Contains("--seed: expected a whole number in [0, 9223372036854775807]"));
    }
  }
}

TEST_CASE("a load CSV's ids are bounded before they size the tables") {
  const auto path = std::filesystem::temp_directory_path() / ("epsim_cli_load_" + std::to_string(::getpid()) + ".csv");
  for (const char* row : {"1e8,0,5\n", "0,100000,5\n", "200000,0,0,5\n", "0,0,inf\n"}) {
    std::ofstream(path) << row;
    const auto r = cli({"place", "--policy", "eplb", "--gpus", "2", "--load", path.string()});
    INFO(row);
    CHECK(r.code != 0);
    CHECK_THAT(r.err, Contains("line 1: expected layer < 4096, expert < 65536"));
  }
  // Found by fuzz_place: ids within their bounds whose dense window is out of all proportion to the rows
  // (14 bytes padded to 9,111 steps x 9,111 experts, 664 MB) are refused before any table grows.
  std::ofstream(path) << "9110,0,9110,2\n";
  const auto sparse = cli({"place", "--policy", "eplb", "--gpus", "2", "--load", path.string()});
  CHECK(sparse.code == 1);
  CHECK_THAT(sparse.err, Contains("line 1: 9111 steps x 1 layers x 9111 experts from 1 row(s): too sparse to pad"));
  // A sparse window of a realistic shape still pads: 3 steps x 2 layers x 8 experts from 5 rows.
  std::ofstream(path) << "step,layer,expert,tokens\n0,0,1,4\n0,1,7,4\n1,0,0,2\n2,1,3,6\n2,0,5,1\n";
  const auto ok = cli({"place", "--policy", "eplb", "--gpus", "2", "--load", path.string()});
  CHECK(ok.code == 0);
  std::filesystem::remove(path);
}

TEST_CASE("validate accepts a good config and rejects a bad one with one line") {
  REQUIRE(cli({"validate", k_small}).code == 0);
  const auto r = cli({"validate", k_small, "--set", "parallel.ep_size=3"});
  REQUIRE(r.code == 2);
  REQUIRE(r.err == "config error: --set: parallel.ep_size: must divide the cluster's 4 GPUs, got 3\n");
  const auto missing = cli({"validate", "/nonexistent.toml"});
  REQUIRE(missing.code == 2);
  REQUIRE_THAT(missing.err, Contains("/nonexistent.toml: cannot open"));
  // What only building the simulation finds, validate finds too (it shares run's code): GEM's load window
  // needs a warm-up run long enough (a generated arrival process goes on for it, whatever the run's own
  // request count; a replayed file of 2 rows cannot), and a replayed arrival file must exist.
  const std::vector<std::string> gem{
      "validate", k_small, "--set", "policy.placement=gem", "--set", "workload.num_requests=3"};
  CHECK(cli(gem).code == 0);
  const auto replay = cli({"validate", k_small, "--set", "workload.arrival=replay", "--set",
                           "workload.replay_file=\"/nonexistent-epsim.csv\""});
  CHECK(replay.code != 0);
  CHECK_THAT(replay.err, Contains("/nonexistent-epsim.csv: cannot open the arrival replay file"));
  // Every replayed row run would read is read: a bad row deep in the file, or no row at all, fails here.
  const fs::path rows = fs::temp_directory_path() / ("epsim_cli_validate_" + std::to_string(::getpid()) + ".csv");
  const std::vector<std::string> replayed{"validate", k_small,
                                          "--set",    "workload.arrival=replay",
                                          "--set",    "workload.replay_file=\"" + rows.string() + "\""};
  std::ofstream(rows) << "arrival_s\n0.5\n1.0\n0.7\n";
  const auto unordered = cli(replayed);
  CHECK(unordered.code == 1);
  CHECK_THAT(unordered.err, Contains(rows.string() + ": line 4: arrival times must be non-decreasing"));
  std::ofstream(rows) << "# no rows yet\n";
  const auto empty = cli(replayed);
  CHECK(empty.code == 1);
  CHECK_THAT(empty.err, Contains(rows.string() + ": no arrival rows"));
  std::ofstream(rows) << "arrival_s\n0.5\n1.0\n";
  const auto two = cli(replayed);
  CHECK(two.code == 0);
  CHECK_THAT(two.out, Contains("replays 2 request(s) from " + rows.string()));
  std::vector<std::string> gem_replayed = replayed;
  gem_replayed.insert(gem_replayed.end(), {"--set", "policy.placement=gem"});
  const auto short_window = cli(gem_replayed);
  CHECK(short_window.code != 0);
  CHECK_THAT(short_window.err, Contains("policy.load_window: the warm-up run served only"));
  CHECK_THAT(short_window.err, Contains("(the replayed file's requests ended)") && Contains("replay a longer file"));
  fs::remove(rows);
}

TEST_CASE("validate reads a ShareGPT conversation file and says how many sessions it holds") {
  const std::string file = std::string(EPSIM_TEST_DATA_DIR) + "/sharegpt/tiny.json";
  const auto ok = cli({"validate", k_small, "--set", "workload.sessions.kind=\"sharegpt\"", "--set",
                       "workload.sessions.file=\"" + file + "\""});
  CHECK(ok.code == 0);
  CHECK_THAT(ok.out, Contains("2 conversation(s) of " + file + " as sessions"));
  const auto missing = cli({"validate", k_small, "--set", "workload.sessions.kind=\"sharegpt\"", "--set",
                            "workload.sessions.file=\"/nonexistent/c.json\""});
  CHECK(missing.code == 1);
  CHECK_THAT(missing.err, Contains("/nonexistent/c.json: cannot read the conversation file"));
}

TEST_CASE("run writes the results directory and a bad config writes nothing") {
  const fs::path dir = fs::temp_directory_path() / "epsim_cli_test_out";
  fs::remove_all(dir);
  const auto bad = cli({"run", k_small, "--out", dir.string(), "--set", "workload.rate_rps=0"});
  REQUIRE(bad.code == 2);
  REQUIRE_FALSE(fs::exists(dir));
  const auto ok = cli({"run", k_small, "--out", dir.string(), "--seed", "3"});
  REQUIRE(ok.code == 0);
  REQUIRE_THAT(ok.out, Contains("TTFT"));
  REQUIRE(fs::exists(dir / "summary.json"));
  REQUIRE(fs::exists(dir / "requests.csv"));
  fs::remove_all(dir);
  const auto unknown = cli({"run", k_small, "--bogus"});
  REQUIRE(unknown.code == 2);
  REQUIRE_THAT(unknown.err, Contains("bogus"));
}

TEST_CASE("workload stats reads a request trace, validate and run replay one in its format") {
  const std::string mooncake = std::string(EPSIM_TEST_DATA_DIR) + "/request_traces/mooncake_3.jsonl";
  // 3 rows at 0, 0.5 and 2 s; 1536 of 3000 prompt tokens in leading blocks seen before (request_trace_test).
  const auto stats = cli({"workload", "stats", mooncake, "--format", "mooncake"});
  REQUIRE(stats.code == 0);
  CHECK_THAT(stats.out, Contains("requests            3\n"));
  CHECK_THAT(stats.out, Contains("arrivals            0.000 s to 2.000 s (2.000 s)"));
  CHECK_THAT(stats.out, Contains("ideal hit rate      0.5120 (1536 of 3000 prompt tokens"));
  // At 4x from 0.4 s: (0.5 - 0.4) / 4 and (2 - 0.4) / 4.
  const auto window =
      cli({"workload", "stats", mooncake, "--format", "mooncake", "--start-s", "0.4", "--speedup", "4"});
  REQUIRE(window.code == 0);
  CHECK_THAT(window.out, Contains("before the window   1 rows"));
  CHECK_THAT(window.out, Contains("arrivals            0.025 s to 0.400 s (0.375 s)"));
  const auto bad = cli({"workload", "stats", mooncake, "--format", "sharegpt"});
  CHECK(bad.code == 2);
  CHECK_THAT(bad.err, Contains("unknown request trace format \"sharegpt\"; valid formats are: csv, mooncake, azure, "
                               "burstgpt"));
  CHECK(cli({"workload", "stats", mooncake, "--format", "mooncake", "--speedup", "0"}).code == 2);
  CHECK(cli({"workload", "frobnicate"}).code == 2);
  const auto wrong_format = cli({"workload", "stats", mooncake, "--format", "azure"});
  CHECK(wrong_format.code == 1);
  CHECK_THAT(wrong_format.err, Contains("mooncake_3.jsonl: line 1: expected TIMESTAMP,ContextTokens,GeneratedTokens"));
  const auto replay = cli({"validate", k_small, "--set", "workload.arrival=replay", "--set",
                           "workload.replay_file=\"" + mooncake + "\"", "--set", "workload.replay_format=mooncake"});
  CHECK(replay.code == 0);
  CHECK_THAT(replay.out, Contains("replays 3 request(s) from " + mooncake));
  // A run of the rows recorded in [0.4, 1.4) s: the one at 0.5 s.
  const fs::path out = fs::temp_directory_path() / ("epsim_cli_mooncake_" + std::to_string(::getpid()));
  const auto run =
      cli({"run", k_small, "--set", "workload.arrival=replay", "--set", "workload.replay_file=\"" + mooncake + "\"",
           "--set", "workload.replay_format=mooncake", "--set", "workload.replay_start_s=0.4", "--set",
           "workload.replay_window_s=1", "--out", out.string()});
  CHECK(run.code == 0);
  CHECK_THAT(run.out, Contains("replayed 1 request(s) from " + mooncake +
                               " (the rows inside workload.replay_start_s / replay_window_s)"));
  fs::remove_all(out);
}

TEST_CASE("the shipped deployments validate", "[slow]") {
  const fs::path dir = fs::path(EPSIM_TEST_DATA_DIR) / ".." / ".." / "examples" / "deployments";
  int seen = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".toml") {
      continue;
    }
    const auto r = cli({"validate", entry.path().string()});
    INFO(entry.path().string() << ": " << r.err);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Contains("DeepSeek-V3"));
    ++seen;
  }
  CHECK(seen >= 3);
}

TEST_CASE("place: the EPLB README example from JSON and CSV, flags over the file, clear errors") {
  const fs::path dir = fs::temp_directory_path() / "epsim_cli_place";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string json = (dir / "load.json").string();
  std::ofstream(json) << R"({"weight": [[90, 132, 40, 61, 104, 165, 39, 4, 73, 56, 183, 86],
    [20, 107, 104, 64, 19, 197, 187, 157, 172, 86, 16, 27]],
    "num_replicas": 16, "num_groups": 4, "num_nodes": 2, "num_gpus": 8})";
  const auto r = cli({"place", "--load", json});
  REQUIRE(r.code == 0);
  REQUIRE_THAT(r.out,
               Contains("\"phy2log\":[[5,6,5,7,8,4,3,4,10,9,10,2,0,1,11,1],[7,10,6,8,6,11,8,9,2,4,5,1,5,0,3,1]]"));
  REQUIRE_THAT(r.out, Contains("\"logcnt\":[[1,2,1,1,2,2,1,1,1,1,2,1]"));
  const auto v = cli({"place", "--load", json, "--format", "vllm"});
  REQUIRE_THAT(v.out, Contains("\"physical_to_logical_map\":[[5,6,5,7"));
  REQUIRE_THAT(v.out, Contains("\"logical_replica_count\""));
  // The same loads as CSV rows, the parameters as flags.
  const std::string csv = (dir / "load.csv").string();
  {
    std::ofstream c(csv);
    c << "layer,expert,tokens\n";
    const int w[2][12] = {{90, 132, 40, 61, 104, 165, 39, 4, 73, 56, 183, 86},
                          {20, 107, 104, 64, 19, 197, 187, 157, 172, 86, 16, 27}};
    for (int l = 0; l < 2; ++l) {
      for (int e = 0; e < 12; ++e) {
        c << l << ',' << e << ',' << w[l][e] << '\n';
      }
    }
  }
  const auto c = cli({"place", "--load", csv, "--gpus", "8", "--nodes", "2", "--groups", "4", "--slots", "16", "--out",
                      (dir / "p.json").string()});
  REQUIRE(c.code == 0);
  REQUIRE(fs::exists(dir / "p.json"));
  // Flags override the file: 4 groups on 4 nodes now.
  const auto o = cli({"place", "--load", json, "--nodes", "4", "--gpus", "8"});
  REQUIRE(o.code == 0);
  REQUIRE_THAT(o.out, Contains("\"num_nodes\":4"));
  // Linear is in the registry too: expert e on GPU floor(e * 8 / 12) = 0 0 1 2 2 3 4 4 5 6 6 7.
  REQUIRE_THAT(cli({"place", "--policy", "linear", "--load", json, "--slots", "16"}).out,
               Contains("\"phy2log\":[[0,1,2,-1,3,4,5,-1,6,7,8,-1,9,10,11,-1]"));
  // Bad inputs: one line each, non-zero exit.
  std::ofstream(dir / "ragged.json") << R"({"weight": [[1, 2, 3, 4], [1, 2]], "num_gpus": 2})";
  auto e = cli({"place", "--load", (dir / "ragged.json").string()});
  REQUIRE(e.code != 0);
  REQUIRE_THAT(e.err, Contains("ragged loads: layer 1 has 2 experts, layer 0 has 4"));
  std::ofstream(dir / "neg.json") << R"({"weight": [[1, -2, 3, 4]], "num_gpus": 2})";
  REQUIRE_THAT(cli({"place", "--load", (dir / "neg.json").string()}).err,
               Contains("negative load -2 at layer 0, expert 1"));
  REQUIRE_THAT(cli({"place", "--load", json, "--slots", "15"}).err,
               Contains("num_replicas (15) must be a multiple of num_gpus (8)"));
  REQUIRE_THAT(cli({"place", "--load", json, "--groups", "5"}).err,
               Contains("the 12 experts do not divide into num_groups = 5"));
  REQUIRE_THAT(cli({"place", "--load", json, "--policy", "magic"}).err, Contains("valid values are:"));
  REQUIRE(std::count(e.err.begin(), e.err.end(), '\n') == 1);
  fs::remove_all(dir);
}

TEST_CASE("place: GEM and ViBE from a per-step window and measured cost curves, clear errors") {
  const fs::path dir = fs::temp_directory_path() / "epsim_cli_place_curves";
  fs::remove_all(dir);
  fs::create_directories(dir);
  // Figure 13 of the GEM paper (tests/policies/gem_test.cpp derives it): the best mappings score 10,
  // pairing E0 with E3 and E1 with E2.
  const std::string window = (dir / "window.csv").string();
  std::ofstream(window) << "step,layer,expert,tokens\n0,0,0,1\n0,0,1,2\n0,0,2,3\n0,0,3,3\n"
                           "1,0,0,2\n1,0,1,3\n1,0,2,1\n1,0,3,2\n2,0,0,3\n2,0,1,2\n2,0,2,2\n2,0,3,1\n";
  const std::string curves = (dir / "curves.csv").string();
  {
    std::ofstream c(curves);
    c << "gpu,tokens,latency_us\n";
    const double c0[] = {1, 1, 2, 3, 4, 4, 5, 6, 7, 8};
    const double c1[] = {1, 2, 2, 3, 4, 5, 6, 7, 8, 9};
    for (int n = 1; n <= 10; ++n) {
      c << "0," << n << "," << c0[n - 1] << "\n1," << n << "," << c1[n - 1] << "\n";
    }
  }
  const auto r = cli({"place", "--policy", "gem", "--load", window, "--gpus", "2", "--curves", curves});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const bool best = r.out.find("\"phy2log\":[[0,3,1,2]]") != std::string::npos ||
                    r.out.find("\"phy2log\":[[1,2,0,3]]") != std::string::npos;
  REQUIRE(best);
  REQUIRE_THAT(r.out, Contains("\"gpu_time_us\":[["));
  const auto v = cli({"place", "--policy", "vibe", "--load", window, "--gpus", "2", "--curves", curves});
  REQUIRE(v.code == 0);
  // A policy that needs curves without them, bad curves, an unknown option, a ragged window.
  REQUIRE_THAT(cli({"place", "--policy", "gem", "--load", window, "--gpus", "2"}).err, Contains("needs cost curves"));
  std::ofstream(dir / "bad.csv") << "gpu,tokens,latency_us\n0,1,1\n5,1,1\n";
  REQUIRE_THAT(
      cli({"place", "--policy", "gem", "--load", window, "--gpus", "2", "--curves", (dir / "bad.csv").string()}).err,
      Contains("line 3: GPU 5 but the EP group has 2 GPUs"));
  std::ofstream(dir / "gap.csv") << "gpu,tokens,latency_us\n0,1,1\n";
  REQUIRE_THAT(
      cli({"place", "--policy", "vibe", "--load", window, "--gpus", "2", "--curves", (dir / "gap.csv").string()}).err,
      Contains("no sample points for GPU 1"));
  REQUIRE_THAT(
      cli({"place", "--policy", "gem", "--load", window, "--gpus", "2", "--curves", curves, "--option", "magic=1"}).err,
      Contains("magic"));
  std::ofstream(dir / "ragged.json") << R"({"window": [[[1, 2, 3, 4]], [[1, 2, 3]]], "num_gpus": 2})";
  REQUIRE_THAT(cli({"place", "--policy", "gem", "--load", (dir / "ragged.json").string(), "--curves", curves}).err,
               Contains("window step 1 layer 0 has 3 experts, expected 4"));
  // Cost curves profiled from an experiment's GPUs instead (its model must have the file's experts).
  const auto cfg = cli({"place", "--policy", "vibe", "--load", window, "--gpus", "2", "--config", k_small});
  REQUIRE_THAT(cfg.err, Contains("4 experts per layer, the model of"));
  std::ofstream(dir / "mixtral.csv") << "layer,expert,tokens\n0,0,900\n0,1,500\n0,2,400\n0,3,300\n0,4,200\n0,5,100\n"
                                        "0,6,50\n0,7,50\n";
  const auto m =
      cli({"place", "--policy", "vibe", "--load", (dir / "mixtral.csv").string(), "--gpus", "4", "--config", k_small});
  INFO(m.err);
  REQUIRE(m.code == 0);
  REQUIRE_THAT(m.out, Contains("\"gpu_time_us\":[["));
  fs::remove_all(dir);
}

TEST_CASE("place --config prices the GPUs a run places for: the first decoding group, its own GPU model") {
  // tests/data/small.toml: 2 nodes x 2 H100, GPU 1 10 % slow. Disaggregated with EP2, group 0 (GPUs 0,
  // 1) prefills on A100s, group 1 (GPUs 2, 3, full speed) decodes; the placement is for group 1. Its
  // curves must be two full-speed H100s', exactly as a co-located EP2 of full-speed H100s sees them
  // (exact curves: no profile noise). Before the shared builders, place took GPUs 0 and 1 (an A100 pool
  // priced as H100s, one of them slow).
  const fs::path dir = fs::temp_directory_path() / "epsim_cli_place_disagg";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::stringstream small;
  small << std::ifstream(k_small).rdbuf();
  const auto variant = [&](const std::string& name, const std::string& extra, const std::string& factors) {
    std::string text = small.str();
    text.replace(text.find("speed_factors = [1.0, 0.9, 1.0, 1.0]"), 36, "speed_factors = " + factors);
    text.replace(text.find("ep_size = 4"), 11, "ep_size = 2");
    text += "\n[policy.cost_profile]\nmode = \"exact\"\n" + extra;
    const std::string path = (dir / name).string();
    std::ofstream(path) << text;
    return path;
  };
  const std::string disagg =
      variant("disagg.toml", "[disaggregation]\nprefill_groups = 1\nprefill_gpu = \"a100\"\n", "[1.0, 0.9, 1.0, 1.0]");
  const std::string colocated = variant("colocated.toml", "", "[1.0, 1.0, 1.0, 1.0]");
  std::ofstream(dir / "load.csv") << "layer,expert,tokens\n0,0,900\n0,1,500\n0,2,400\n0,3,300\n0,4,200\n0,5,100\n"
                                     "0,6,50\n0,7,50\n";
  const auto place = [&](const std::string& config) {
    const auto r =
        cli({"place", "--policy", "vibe", "--load", (dir / "load.csv").string(), "--gpus", "2", "--config", config});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto at = r.out.find("\"gpu_time_us\"");
    REQUIRE(at != std::string::npos);
    return r.out.substr(at);
  };
  REQUIRE(place(disagg) == place(colocated));
  // The slow GPU and the A100 pool are visible when they are the ones placed for.
  const std::string slow = variant("slow.toml", "", "[1.0, 0.9, 1.0, 1.0]");
  REQUIRE(place(slow) != place(colocated));
  fs::remove_all(dir);
}

TEST_CASE("cost --config prices a GPU of the experiment with the run's cost model") {
  // GPU 0 of tests/data/small.toml is an H100 at full speed: the same table as --gpu h100.
  const std::vector<std::string> common{"--tokens", "1,64,4096", "--local-experts", "2", "--csv"};
  auto by_config = std::vector<std::string>{"cost", "--config", k_small, "--gpu-index", "0"};
  by_config.insert(by_config.end(), common.begin(), common.end());
  auto by_preset = std::vector<std::string>{"cost", "--gpu", "h100", "--model", "mixtral-8x7b"};
  by_preset.insert(by_preset.end(), common.begin(), common.end());
  const auto c0 = cli(by_config);
  INFO(c0.err);
  REQUIRE(c0.code == 0);
  REQUIRE(c0.out == cli(by_preset).out);
  // GPU 1 is 10 % slow: a compute-bound kernel (4096 tokens of experts) shows all of it, as --speed 0.9
  // does; a memory-bound one (1 token) only its stress-weighted share (ViBE), so it is faster than that.
  by_config[4] = "1";
  const auto c1 = cli(by_config);
  auto slow = by_preset;
  slow.insert(slow.end(), {"--speed", "0.9"});
  const auto s = cli(slow);
  const auto expert_us = [](const std::string& csv, const std::string& tokens) {
    const auto row = csv.find("\n" + tokens + ",");
    REQUIRE(row != std::string::npos);
    const auto cells = epsim::test::csv_cells(csv.substr(row + 1, csv.find('\n', row + 1) - row - 1));
    return std::stod(cells[2]);
  };
  REQUIRE(expert_us(c1.out, "4096") == Approx(expert_us(s.out, "4096")).epsilon(1e-12));
  REQUIRE(expert_us(c1.out, "1") < expert_us(s.out, "1"));
  REQUIRE(expert_us(c1.out, "1") > expert_us(c0.out, "1"));
  // Bad combinations and indices are usage errors.
  REQUIRE_THAT(cli({"cost", "--config", k_small, "--gpu", "h100"}).err, Contains("drop --gpu, --model and --speed"));
  REQUIRE_THAT(cli({"cost", "--config", k_small, "--gpu-index", "4"}).err,
               Contains("--gpu-index: expected a GPU of the cluster's 4 (0 .. 3), got 4"));
}

TEST_CASE("place: GRACE from a co-selection file groups the planted pairs") {
  const fs::path dir = fs::temp_directory_path() / "epsim_cli_place_grace";
  fs::remove_all(dir);
  fs::create_directories(dir);
  // 8 experts planted in two blocks {0, 5, 2, 7} and {1, 4, 3, 6}, each of two tighter pairs (0-5, 2-7,
  // 1-4, 3-6), on 2 nodes x 2 GPUs of 2 slots: each node should get a block, each GPU a pair.
  const std::string loads = (dir / "loads.csv").string();
  std::ofstream(loads) << "layer,expert,tokens\n0,0,10\n0,1,10\n0,2,10\n0,3,10\n0,4,10\n0,5,10\n0,6,10\n0,7,10\n";
  const std::string co = (dir / "co.csv").string();
  {
    std::ofstream c(co);
    c << "layer,expert_a,expert_b,tokens\n";
    const int block[8] = {0, 1, 0, 1, 1, 0, 1, 0};
    const int pair[8] = {0, 2, 1, 3, 2, 0, 3, 1};
    for (int a = 0; a < 8; ++a) {
      for (int b = a + 1; b < 8; ++b) {
        const int w = pair[a] == pair[b] ? 300 : block[a] == block[b] ? 100 : 1;
        c << "0," << a << "," << b << "," << w << "\n";
      }
    }
  }
  const auto r = cli({"place", "--policy", "grace", "--load", loads, "--gpus", "4", "--nodes", "2", "--coactivation",
                      co, "--option", "replication=false"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  // Every GPU holds one planted pair.
  const auto at = r.out.find("\"phy2log\":[[");
  REQUIRE(at != std::string::npos);
  std::vector<int> p;
  std::istringstream in(r.out.substr(at + 12));
  for (int i = 0; i < 8; ++i) {
    int x = 0;
    char sep = 0;
    in >> x >> sep;
    p.push_back(x);
  }
  const std::vector<std::vector<int>> pairs{{0, 5}, {2, 7}, {1, 4}, {3, 6}};
  for (int g = 0; g < 4; ++g) {
    std::vector<int> mine{p[static_cast<std::size_t>(2 * g)], p[static_cast<std::size_t>(2 * g + 1)]};
    std::sort(mine.begin(), mine.end());
    INFO("GPU " << g);
    REQUIRE(std::find(pairs.begin(), pairs.end(), mine) != pairs.end());
  }
  // Each node's two GPUs hold the two pairs of one block.
  for (int n = 0; n < 2; ++n) {
    std::vector<int> node(p.begin() + 4 * n, p.begin() + 4 * n + 4);
    std::sort(node.begin(), node.end());
    REQUIRE((node == std::vector<int>{0, 2, 5, 7} || node == std::vector<int>{1, 3, 4, 6}));
  }
  REQUIRE_THAT(cli({"place", "--policy", "grace", "--load", loads, "--gpus", "4"}).err,
               Contains("needs co-selection counts"));
  std::ofstream(dir / "bad.csv") << "layer,expert_a,expert_b,tokens\n0,3,3,5\n";
  REQUIRE_THAT(
      cli({"place", "--policy", "grace", "--load", loads, "--gpus", "4", "--coactivation", (dir / "bad.csv").string()})
          .err,
      Contains("line 2: expected layer,expert_a,expert_b,tokens"));
  fs::remove_all(dir);
}

TEST_CASE("timeline.json: the slices of a GPU's track abut or nest, never overlap") {
  const fs::path dir = fs::temp_directory_path() / "epsim_cli_timeline";
  fs::remove_all(dir);
  const auto run = cli(
      {"run", k_small, "--out", dir.string(), "--set", "output.timeline=true", "--set", "output.timeline_steps=50"});
  REQUIRE(run.code == 0);
  std::ifstream in(dir / "timeline.json");
  const nlohmann::json trace = nlohmann::json::parse(in);
  // Per (pid, tid) track: [begin, end) in integer ns, exactly as printed (us with three decimals).
  std::map<std::pair<int, int>, std::vector<std::pair<std::int64_t, std::int64_t>>> tracks;
  std::size_t slices = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X" || e["tid"].get<int>() >= epsim::serving::TimelineLog::k_steps_tid) {
      continue;  // GPU tracks only (the steps track's slices are checked in observability_test.cpp)
    }
    const auto begin = std::llround(e["ts"].get<double>() * 1000.0);
    const auto dur = std::llround(e["dur"].get<double>() * 1000.0);
    REQUIRE(dur > 0);
    tracks[{e["pid"].get<int>(), e["tid"].get<int>()}].emplace_back(begin, begin + dur);
    ++slices;
  }
  REQUIRE(slices > 1000);
  REQUIRE(tracks.size() == 4);  // small.toml: one EP4 group
  std::size_t abutting = 0;
  for (auto& [track, s] : tracks) {
    std::sort(s.begin(), s.end());
    for (std::size_t i = 1; i < s.size(); ++i) {
      INFO("track " << track.first << "/" << track.second << " slice " << i);
      REQUIRE(s[i].first >= s[i - 1].second);
      abutting += s[i].first == s[i - 1].second ? 1 : 0;
    }
  }
  // Within a layer the phases follow each other without gaps: most neighbours abut exactly.
  REQUIRE(abutting > slices / 2);
  fs::remove_all(dir);
}
