// SPDX-License-Identifier: Apache-2.0
// Issue 35's validation items: what used to validate and then mislead, crash or exit 0 with nothing.
// Axis keys in objectives, bounded study sizes and keys, advice that works when applied literally,
// `validate` and `sweep --dry-run` on study files, bounded rates and request counts, --set values that
// stay one value, terminal escapes that never reach the terminal, and deeply nested JSON refused by
// every reader with one line naming the file.
#include <unistd.h>

#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "calibration/import_torch_trace.hpp"
#include "core/error.hpp"
#include "engines/json_reading.hpp"
#include "engines/safetensors.hpp"
#include "experiments/cli/place_inputs.hpp"
#include "experiments/studies/study_plan.hpp"
#include "experiments/studies/study_report.hpp"
#include "experiments/studies/study_spec.hpp"
#include "tests/support/cli.hpp"
#include "workloads/trace_tools.hpp"

namespace fs = std::filesystem;
using namespace epsim;
using namespace epsim::experiments;
using Catch::Contains;
using epsim::test::cli;

namespace {

const std::string k_data = EPSIM_TEST_DATA_DIR;
const std::string k_small = k_data + "/small.toml";

StudySpec study(const std::string& text) {
  return load_study_text(text, "study.toml", k_data);
}

// A fresh scratch directory for one test.
fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("epsim-h35-{}-{}", name, ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string axes_of_two(int n) {
  std::string text = "[study]\nbase = \"small.toml\"\n";
  for (int i = 0; i < n; ++i) {
    text += fmt::format("[[axis]]\nkey = \"workload.k{}\"\nvalues = [1, 2]\n", i);
  }
  return text;
}

}  // namespace

TEST_CASE("a constraint or objective on an axis key uses the axis's value at each point") {
  const StudySpec s = study(R"(
[study]
base = "small.toml"
[study.objective]
maximize = "slo.goodput_rps"
subject_to = ["workload.rate_rps >= 3"]
[[axis]]
key = "workload.rate_rps"
values = [2.0, 4.0, 8.0]
labels = ["low", "mid", "high"]
)");
  const StudyPlan plan = plan_study(s);
  StudyRecords records(3);
  records[0].metrics = {{"slo.goodput_rps", 2.0}};
  records[1].metrics = {{"slo.goodput_rps", 3.5}};
  records[2].metrics = {{"slo.goodput_rps", 3.0}};
  // Rates 4 and 8 meet ">= 3" (by the axis value, not its label); 4 has the most goodput. Before, the
  // constraint read a metric no run reports: every point infeasible.
  REQUIRE_THAT(ranking_csv(s, plan, records),
               Contains("rank,point,workload.rate_rps,slo.goodput_rps,feasible,workload.rate_rps >= 3\n"
                        "1,1,mid,3.5,1,4\n2,2,high,3,1,8\n3,0,low,2,0,2\n"));
  REQUIRE_THAT(study_table(s, plan, records), Contains("best: point 1 (workload.rate_rps=mid)"));

  // Minimising an axis: the smallest rate that is feasible.
  const StudySpec by_axis = study(R"(
[study]
base = "small.toml"
[study.objective]
minimize = "workload.rate_rps"
subject_to = ["slo.goodput_rps >= 3"]
[[axis]]
key = "workload.rate_rps"
values = [2.0, 4.0, 8.0]
)");
  REQUIRE_THAT(ranking_csv(by_axis, plan_study(by_axis), records), Contains("1,1,4,4,1,3.5\n2,2,8,8,1,3\n"));
}

TEST_CASE("objective names that cannot be metrics are refused before anything runs, unreported ones are named") {
  // An axis of policy bundles has no numbers.
  REQUIRE_THROWS_WITH(study("[study]\nbase = \"small.toml\"\n[study.objective]\nmaximize = \"x\"\nsubject_to = "
                            "[\"policy >= 1\"]\n[[axis]]\nname = \"policy\"\npolicies = [\"linear\"]\n"),
                      Contains("study.objective.subject_to: \"policy\" is an axis whose levels are not all numbers"));
  // A config key that is no axis: no run reports it.
  const StudySpec key = study(
      "[study]\nbase = \"small.toml\"\n[study.objective]\nmaximize = \"slo.goodput_rps\"\nsubject_to = "
      "[\"workload.rate_rps >= 3\"]\n[[axis]]\nkey = \"workload.num_requests\"\nvalues = [10, 20]\n");
  REQUIRE_THROWS_WITH(plan_study(key), Contains("\"workload.rate_rps\" is a config key, not a metric of the runs") &&
                                           Contains("make it an axis"));
  // slo.ttft_ms is both a config key and a metric: it passes.
  REQUIRE_NOTHROW(plan_study(study("[study]\nbase = \"small.toml\"\n[study.objective]\nminimize = \"slo.ttft_ms\"\n")));
  // A misspelt metric: the table says no run reported it instead of silently finding nothing feasible.
  const StudySpec typo = study("[study]\nbase = \"small.toml\"\n[study.objective]\nmaximize = \"slo.goodput\"\n");
  const StudyPlan plan = plan_study(typo);
  StudyRecords records(1);
  records[0].metrics = {{"slo.goodput_rps", 2.0}};
  REQUIRE_THAT(study_table(typo, plan, records), Contains("no run reported a metric \"slo.goodput\""));
}

TEST_CASE("study size is bounded before anything is allocated, with overflow checked") {
  // 64 two-level axes wrapped the product to 0 points (exit 0); 32 ended in bad_alloc; 20 took minutes.
  for (const int n : {14, 20, 32, 63, 64, 65}) {
    INFO(n << " axes");
    const auto t0 = std::chrono::steady_clock::now();
    REQUIRE_THROWS_WITH(study(axes_of_two(n)), Contains("study.toml: axis: the axes make more than 10000 points"));
    REQUIRE(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 2.0);
  }
  // 2^13 = 8192 points is within the bound (the spec only; its points are not planned here).
  REQUIRE(study(axes_of_two(13)).axes.size() == 13);
  // Zipped axes do not multiply.
  REQUIRE_NOTHROW(
      study(axes_of_two(13) + "[[axis]]\nkey = \"workload.z\"\nvalues = [1, 2]\nzip_with = \"workload.k0\"\n"));
  // Runs: points x replications.
  REQUIRE_THROWS_WITH(study("[study]\nbase = \"small.toml\"\nreplications = 100000\n[[axis]]\nkey = \"a.b\"\nvalues "
                            "= [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]\n"),
                      Contains("11 points x 100000 replications is more than 1000000 runs"));
}

TEST_CASE("an axis key of 60,000 dotted levels, control characters in labels and names are refused cheaply") {
  std::string deep = "a";
  for (int i = 1; i < 60000; ++i) {
    deep += ".a";
  }
  const auto t0 = std::chrono::steady_clock::now();
  REQUIRE_THROWS_WITH(study("[study]\nbase = \"small.toml\"\n[[axis]]\nkey = \"" + deep + "\"\nvalues = [1]\n"),
                      Contains("axis[0].key") && Contains("nests at most 64 levels deep, this one 60000"));
  REQUIRE(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 2.0);
  REQUIRE_THROWS_WITH(study("[study]\nbase = \"small.toml\"\n[[axis]]\nkey = \"a..b\"\nvalues = [1]\n"),
                      Contains("expected a dotted config key"));
  // An ANSI escape in a label: refused, and the message shows it escaped.
  try {
    (void)study(
        "[study]\nbase = \"small.toml\"\n[[axis]]\nkey = \"workload.rate_rps\"\nvalues = [1]\nlabels = "
        "[\"\\u001b[2Jx\"]\n");
    FAIL("an escape in a label was accepted");
  } catch (const core::ConfigError& e) {
    const std::string what = e.what();
    REQUIRE_THAT(what, Contains("axis[0].labels: \"\\x1b[2Jx\": expected printable text"));
    REQUIRE(what.find('\x1b') == std::string::npos);
  }
  REQUIRE_THROWS_WITH(study("[study]\nbase = \"small.toml\"\n[[axis]]\nname = \"p\\rq\"\npolicies = [\"linear\"]\n"),
                      Contains("axis[0].name"));
}

TEST_CASE("infinite and vanishing rates, and request counts past memory, are refused at validation") {
  // A study rate grid of inf ended in bad_alloc.
  REQUIRE_THROWS_WITH(study("[study]\nbase = \"small.toml\"\n[study.max_rate]\nrates = [10.0, inf]\n"),
                      Contains("study.max_rate.rates: expected rates in (0, 1e+07] req/s"));
  // A rate axis of inf: the point's config is refused.
  REQUIRE_THROWS_WITH(
      plan_study(study("[study]\nbase = \"small.toml\"\n[[axis]]\nkey = \"workload.rate_rps\"\nvalues = [inf]\n")),
      Contains("workload.rate_rps"));
  const auto validate = [](std::vector<std::string> sets) {
    std::vector<std::string> args{"validate", k_small};
    for (const std::string& s : sets) {
      args.emplace_back("--set");
      args.push_back(s);
    }
    return cli(args);
  };
  // 1e-300 req/s ran 0 requests and exited 0.
  auto r = validate({"workload.rate_rps=1e-300"});
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Contains("workload.rate_rps"));
  // 1e8 requests ended in "error: std::bad_alloc".
  r = validate({"workload.num_requests=100000000"});
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Contains("workload.num_requests"));
  // By duration: 1e6 req/s x 100 s = 1e8 requests; 1e-3 req/s x 10 s: fewer than one.
  r = validate({"workload.num_requests=0", "workload.duration_s=100", "workload.rate_rps=1e6"});
  REQUIRE_THAT(r.err, Contains("rate_rps x duration_s = 1e+08 requests"));
  r = validate({"workload.num_requests=0", "workload.duration_s=10", "workload.rate_rps=1e-3"});
  REQUIRE_THAT(r.err, Contains("fewer than one request is expected to arrive"));
  // 200 requests at 1e-6 req/s arrive over 2e8 s: inside simulated time. 2,000 do not.
  REQUIRE(validate({"workload.num_requests=200", "workload.rate_rps=1e-6"}).code == 0);
  REQUIRE_THAT(validate({"workload.num_requests=2000", "workload.rate_rps=1e-6"}).err,
               Contains("past the 1e+09 s of simulated time"));
  // slo --rates inf ended in bad_alloc.
  r = cli({"slo", k_small, "--rates", "1,inf"});
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Contains("--rates: \"inf\" is not a finite number"));
  r = cli({"slo", k_small, "--rates", "1,1e300"});
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Contains("--rates: 1e+300 req/s is outside"));
}

TEST_CASE("a --set value is one value: a newline cannot open other tables") {
  auto r = cli({"validate", k_small, "--set", "workload.rate_rps=4\n[cluster]\nnodes = 9"});
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Contains("a --set is one line"));
  REQUIRE(r.err.find('\n') == r.err.size() - 1);  // one line
  // Errors quoting user input never pass its escapes on to the terminal.
  r = cli({"validate", "/nonexistent/\x1b[31mred.toml"});
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Contains("\\x1b[31mred.toml"));
  REQUIRE(r.err.find('\x1b') == std::string::npos);
}

TEST_CASE("the warm-up's advice for pools of different EP sizes works when applied as written") {
  // 6 GPUs: a prefill pool of EP4 and a decode pool of EP2. However many requests are served, the
  // warm-up records too few steps; the synthetic window is the fix the message must give.
  const std::vector<std::string> base{"validate", k_small,
                                      "--set",    "cluster.nodes=3",
                                      "--set",    "cluster.speed_factors=[1,1,1,1,1,1]",
                                      "--set",    "parallel.ep_size=2",
                                      "--set",    "disaggregation.prefill_groups=1",
                                      "--set",    "disaggregation.prefill_ep_size=4",
                                      "--set",    "policy.placement=eplb"};
  const auto failed = cli(base);
  REQUIRE(failed.code == 2);
  const std::string advice = "policy.load_window = \"synthetic\"";
  REQUIRE_THAT(failed.err, Contains("set " + advice) && Contains("pools differ in EP size"));
  REQUIRE_THAT(failed.err, !Contains("serve more requests"));
  // Applied literally (the key = value of the message, as a --set).
  std::vector<std::string> fixed = base;
  fixed.emplace_back("--set");
  fixed.emplace_back("policy.load_window=\"synthetic\"");
  const auto ok = cli(fixed);
  INFO(ok.err);
  REQUIRE(ok.code == 0);
}

TEST_CASE("the DIRECTOR warning's advice is a setting that is accepted, in a file and as a --set") {
  const fs::path dir = scratch("director");
  const std::string trace = (dir / "mix.trace").string();
  REQUIRE(cli({"trace", "gen", k_small, "--out", trace, "--steps", "50", "--tokens", "64"}).code == 0);
  const std::vector<std::string> sets{"--set", "policy.placement=director",           "--set", "routing.source=trace",
                                      "--set", "routing.trace_file=\"" + trace + "\""};
  std::vector<std::string> args{"validate", k_small, "--set", "policy.rebalance=director"};
  args.insert(args.end(), sets.begin(), sets.end());
  const auto warned = cli(args);
  REQUIRE(warned.code == 0);
  const std::string advice = "policy.rebalance = { trigger = \"director\", mode = \"reactive\" }";
  REQUIRE_THAT(warned.err, Contains("set " + advice));
  // As a --set: key=value with the value as written.
  std::vector<std::string> as_set{"validate", k_small, "--set",
                                  "policy.rebalance={ trigger = \"director\", mode = \"reactive\" }"};
  as_set.insert(as_set.end(), sets.begin(), sets.end());
  const auto applied = cli(as_set);
  INFO(applied.err);
  REQUIRE(applied.code == 0);
  REQUIRE_THAT(applied.err, !Contains("predicts nothing"));
  // In a config file: the line as written, at the top level of a file without a [policy] table.
  std::ifstream in(k_small);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string policy_table = "[policy]\nplacement = \"linear\"\nrouting = \"even\"\n";
  REQUIRE(text.find(policy_table) != std::string::npos);
  text.erase(text.find(policy_table), policy_table.size());
  text.insert(0, advice + "\n");
  std::ofstream(dir / "c.toml") << text;
  std::vector<std::string> from_file{"validate", (dir / "c.toml").string()};
  from_file.insert(from_file.end(), sets.begin(), sets.end());
  const auto file = cli(from_file);
  INFO(file.err);
  REQUIRE(file.code == 0);
  REQUIRE_THAT(file.err, !Contains("predicts nothing"));
  fs::remove_all(dir);
}

TEST_CASE(
    "epsim validate checks a study file, and sweep --dry-run prints points, runs and an estimate, writes nothing") {
  const fs::path dir = scratch("dryrun");
  fs::copy_file(k_small, dir / "small.toml");
  std::ofstream(dir / "s.toml") << "[study]\nbase = \"small.toml\"\nreplications = 2\n[[axis]]\nkey = "
                                   "\"workload.rate_rps\"\nvalues = [2.0, 4.0]\n";
  // Before: "model.hidden_size: missing required key" (read as an experiment).
  auto r = cli({"validate", (dir / "s.toml").string()});
  INFO(r.err);
  REQUIRE(r.code == 0);
  REQUIRE_THAT(r.out, Contains("s.toml: ok (study, kind grid: 2 points x 2 replications = 4 runs)"));
  // A bad point is found by validate, naming it.
  std::ofstream(dir / "bad.toml") << "[study]\nbase = \"small.toml\"\n[[axis]]\nkey = \"parallel.ep_size\"\nvalues "
                                     "= [4, 3]\n";
  r = cli({"validate", (dir / "bad.toml").string()});
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Contains("point 1 (parallel.ep_size=3)"));
  // The dry run.
  const fs::path out = dir / "results";
  r = cli({"sweep", (dir / "s.toml").string(), "--dry-run", "--out", out.string(), "-j", "2"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  REQUIRE_THAT(r.out, Contains("2 points x 2 replications = 4 runs") &&
                          Contains("  point 0: workload.rate_rps=2\n  point 1: workload.rate_rps=4\n") &&
                          Contains("estimated CPU time: ") && Contains("from a pilot of point 0 with 32 requests") &&
                          Contains("nothing was run or written"));
  REQUIRE_FALSE(fs::exists(out));
  REQUIRE_FALSE(fs::exists(dir / "results"));
  fs::remove_all(dir);
}

TEST_CASE("deeply nested JSON is refused by every reader with one line naming the file") {
  const fs::path dir = scratch("json");
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  // epsim report on a summary.json of 200,000 nested arrays overflowed the stack.
  fs::create_directories(dir / "run");
  std::ofstream(dir / "run" / "summary.json") << "{\"metrics\": " << deep << "}";
  auto r = cli({"report", (dir / "run").string(), "--out", (dir / "r.html").string()});
  REQUIRE(r.code == 1);
  REQUIRE_THAT(r.err, Contains("summary.json: line 1: JSON nests deeper than 256 levels"));
  REQUIRE_FALSE(fs::exists(dir / "r.html"));
  // Placement files (place --check reads them through the same function).
  REQUIRE_THROWS_WITH(engines::parse_json(deep, "p.json"), Contains("p.json: line 1: JSON nests deeper than 256"));
  // A safetensors header.
  const std::string header = "{\"__metadata__\": {\"x\": " + deep + "}}";
  std::string file(8, '\0');
  const std::uint64_t len = header.size();
  std::memcpy(file.data(), &len, 8);
  std::ofstream(dir / "t.safetensors", std::ios::binary) << file << header;
  REQUIRE_THROWS_WITH(engines::SafetensorsFile(dir / "t.safetensors"),
                      Contains("t.safetensors") && Contains("JSON nests deeper than 256"));
  // A value that is not an integer is echoed cut short, not dumped whole.
  const std::string long_list = "[[\"" + std::string(100000, 'x') + "\"]]";
  try {
    (void)engines::int_rows(engines::parse_json(long_list, "q.json"), "rows", "q.json");
    FAIL("accepted");
  } catch (const core::Error& e) {
    REQUIRE_THAT(std::string(e.what()), Contains("q.json: rows[0][0]: expected an integer"));
    REQUIRE(std::string(e.what()).size() < 300);
  }
  fs::remove_all(dir);
}

TEST_CASE("report draws a study whose rate axis has labels, at the rates the labels stand for") {
  const fs::path dir = scratch("labelled-rates");
  fs::copy_file(k_small, dir / "small.toml");
  std::ofstream(dir / "s.toml") << "[study]\nkind = \"compare\"\nbase = \"small.toml\"\nreplications = 1\n"
                                   "[[axis]]\nname = \"policy\"\npolicies = [\"linear\"]\n"
                                   "[[axis]]\nkey = \"workload.rate_rps\"\nvalues = [2.0, 4.0]\n"
                                   "labels = [\"quiet\", \"busy\"]\n";
  auto r = cli({"sweep", (dir / "s.toml").string(), "--out", (dir / "out").string(), "--progress", "none"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  r = cli({"report", (dir / "out").string(), "--out", (dir / "r.html").string(), "--no-svg"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  // The attainment-vs-rate figure's data: the two points at x = 2 and 4 req/s.
  bool found = false;
  for (const auto& e : fs::directory_iterator(dir / "r-figures")) {
    if (e.path().extension() != ".csv") {
      continue;
    }
    std::ifstream in(e.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.find("linear,2,") != std::string::npos && text.find("linear,4,") != std::string::npos) {
      found = true;
    }
  }
  CHECK(found);
  fs::remove_all(dir);
}

TEST_CASE("a JSON value of the wrong type names the file and the key, not only nlohmann's type_error") {
  const fs::path dir = scratch("json-types");
  // epsim place's load JSON: a count as a string.
  std::ofstream(dir / "load.json") << R"({"weight": [[1, 2]], "num_replicas": "two"})";
  REQUIRE_THROWS_WITH(read_load_json(dir / "load.json"), Contains("load.json: \"num_replicas\": expected an integer"));
  // A token dump whose model is a number.
  std::ofstream(dir / "tokens.json") << R"({"model": 5, "experts": 8, "top_k": 2, "steps": []})";
  REQUIRE_THROWS_WITH(workloads::import_token_json(dir / "tokens.json", dir / "t.trace"),
                      Contains("tokens.json: \"model\": expected a string"));
  // A torch trace whose event phase is a number: the file is named.
  std::ofstream(dir / "trace.json") << R"({"traceEvents": [{"cat": "cpu_op", "ph": 5, "name": "x"}]})";
  const std::vector<fs::path> files{dir / "trace.json"};
  calibration::ImportOptions o;
  o.gpu = "h100";
  try {
    (void)calibration::import_torch_trace(files, o);
    FAIL("accepted");
  } catch (const core::Error& e) {
    REQUIRE_THAT(std::string(e.what()), Contains("trace.json"));
  }
  fs::remove_all(dir);
}
