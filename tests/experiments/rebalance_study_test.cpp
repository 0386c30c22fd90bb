// SPDX-License-Identifier: Apache-2.0
// The rebalance study kind: the axes it makes, its refusals, the break-even rule by hand, and a tiny
// sweep's rebalance.csv against the paired changes computed here from its runs.csv.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "experiments/studies/rebalance_report.hpp"
#include "experiments/studies/study_spec.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/csv.hpp"

namespace fs = std::filesystem;
using namespace epsim;
using namespace epsim::experiments;
using Catch::Contains;

namespace {

const std::string k_data = EPSIM_TEST_DATA_DIR;

StudySpec study(const std::string& body) {
  return load_study_text("[study]\nkind = \"rebalance\"\nbase = \"small.toml\"\n" + body, "study.toml", k_data);
}

std::size_t col(const std::vector<std::string>& header, const std::string& name) {
  const auto it = std::find(header.begin(), header.end(), name);
  REQUIRE(it != header.end());
  return static_cast<std::size_t>(it - header.begin());
}

}  // namespace

TEST_CASE("a rebalance study sweeps slots and schedules: off first and the baseline") {
  const StudySpec s = study(
      "replications = 2\n[study.rebalance]\ninterval_steps = [16, 64]\nmigration = [\"stop_the_world\", "
      "\"layer_by_layer\"]\nredundant_slots = [0, 4]\noptions = { window_steps = 8 }\n");
  REQUIRE(s.kind == StudyKind::rebalance);
  REQUIRE(s.axes.size() == 2);
  REQUIRE(s.axes[0].name == "redundant_slots");
  REQUIRE(s.axes[0].levels[1].overrides.at_path("parallel.redundant_experts").value<std::int64_t>() == 4);
  REQUIRE(s.axes[1].name == "schedule");
  std::vector<std::string> labels;
  for (const AxisLevel& l : s.axes[1].levels) {
    labels.push_back(l.label);
  }
  REQUIRE(labels == std::vector<std::string>{"off", "stop_the_world/16", "stop_the_world/64", "layer_by_layer/16",
                                             "layer_by_layer/64"});
  const toml::table& lbl = s.axes[1].levels[4].overrides;
  REQUIRE(lbl.at_path("policy.rebalance.trigger").value<std::string>() == "periodic");
  REQUIRE(lbl.at_path("policy.rebalance.interval_steps").value<std::int64_t>() == 64);
  REQUIRE(lbl.at_path("policy.rebalance.migration").value<std::string>() == "layer_by_layer");
  REQUIRE(lbl.at_path("policy.rebalance.window_steps").value<std::int64_t>() == 8);
  REQUIRE(s.axes[1].levels[0].overrides.at_path("policy.rebalance.trigger").value<std::string>() == "none");
  REQUIRE(s.baseline == std::make_pair(std::string("schedule"), std::string("off")));
  REQUIRE(s.rebalance.has_value());
  const RebalanceSweep sweep = s.rebalance.value_or(RebalanceSweep{});
  REQUIRE(sweep.migration_of(3) == "layer_by_layer");
  REQUIRE(sweep.interval_of(3) == 16);
  REQUIRE(s.report.front() == "output_tokens_per_s");
}

TEST_CASE("a bad rebalance study is refused naming the key") {
  REQUIRE_THROWS_WITH(study(""), Contains("study.rebalance: a rebalance study needs a [study.rebalance] table"));
  REQUIRE_THROWS_WITH(study("[study.rebalance]\ninterval_steps = [64, 16]\n"),
                      Contains("study.rebalance.interval_steps: expected a non-empty list of at most 64 integers >= 1 "
                               "in ascending order"));
  REQUIRE_THROWS_WITH(study("[study.rebalance]\nmigration = [\"stop_the_world\"]\n"),
                      Contains("study.rebalance.interval_steps: expected the intervals to sweep"));
  REQUIRE_THROWS_WITH(study("[study.rebalance]\ninterval_steps = [8]\nmigration = [\"overlapped\", \"overlapped\"]\n"),
                      Contains("study.rebalance.migration: expected a non-empty list of distinct migration modes"));
  REQUIRE_THROWS_WITH(study("[study.rebalance]\ninterval_steps = [8]\noptions = { interval_steps = 3 }\n"),
                      Contains("study.rebalance.options.interval_steps: the sweep sets this one"));
  REQUIRE_THROWS_WITH(study("[study.rebalance]\ninterval_steps = [8]\nspeed = 2\n"),
                      Contains("study.rebalance.speed: unknown key"));
  REQUIRE_THROWS_WITH(load_study_text("[study]\nbase = \"small.toml\"\n[study.rebalance]\ninterval_steps = [8]\n",
                                      "study.toml", k_data),
                      Contains("only a study of kind = \"rebalance\" takes [study.rebalance]"));
  // The base may not set what every point sets.
  REQUIRE_THROWS_WITH(load_study_text("[study]\nkind = \"rebalance\"\n[study.rebalance]\ninterval_steps = [8]\n"
                                      "[base.policy]\nrebalance = \"periodic\"\n",
                                      "study.toml", k_data),
                      Contains("sets policy.rebalance, which a rebalance study sets at every point"));
  REQUIRE_THROWS_WITH(study("[study.rebalance]\ninterval_steps = [8]\n[[axis]]\nname = \"schedule\"\nkey = "
                            "\"workload.rate_rps\"\nvalues = [1.0]\n"),
                      Contains("\"schedule\" is the name of an axis a rebalance study makes"));
}

TEST_CASE("the break-even interval interpolates in log interval between the last loss and the first gain") {
  // -10 % at 16, +10 % at 64: halfway in log, sqrt(16 x 64) = 32.
  BreakEven b = break_even({16, 64, 256}, {-0.1, 0.1, 0.2});
  REQUIRE(b.status == BreakEven::Status::crosses);
  REQUIRE(b.interval == Approx(32.0));
  // -30 % at 4, +10 % at 16: three quarters of the way from 4 to 16 in log: 4 x 4^0.75.
  b = break_even({4, 16}, {-0.3, 0.1});
  REQUIRE(b.interval == Approx(4.0 * std::pow(4.0, 0.75)));
  REQUIRE(break_even({8, 32}, {0.0, 0.1}).status == BreakEven::Status::pays_from_first);
  REQUIRE(break_even({8, 32}, {-0.2, -0.1}).status == BreakEven::Status::never_pays);
  const double nan = std::nan("");
  // An interval whose runs never rebalanced is unknown, not a zero gain.
  REQUIRE(break_even({8, 32, 128}, {-0.2, -0.1, nan}).status == BreakEven::Status::never_pays);
  REQUIRE(break_even({8, 32}, {nan, 0.1}).status == BreakEven::Status::unknown);
  REQUIRE(break_even({8, 32}, {nan, nan}).status == BreakEven::Status::unknown);
}

TEST_CASE("a rebalance sweep's changes are the paired changes against off, by hand from runs.csv") {
  const fs::path dir = fs::temp_directory_path() / "epsim-rebalance-study";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "study.toml") << "[study]\nkind = \"rebalance\"\nbase = \"" << k_data
                                    << "/small.toml\"\nreplications = 2\n[study.rebalance]\ninterval_steps = [20, 80]\n"
                                       "migration = [\"stop_the_world\", \"layer_by_layer\"]\n";
  const test::Cli r =
      test::cli({"sweep", (dir / "study.toml").string(), "--out", (dir / "out").string(), "--progress", "none"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  REQUIRE_THAT(r.out, Contains("break-even interval (throughput against rebalancing off):"));
  const auto runs = test::csv_file_rows(dir / "out" / "runs.csv");
  const auto reb = test::csv_file_rows(dir / "out" / "rebalance.csv");
  const std::size_t tput = col(runs[0], "output_tokens_per_s");
  const std::size_t point = col(runs[0], "point");
  std::map<int, std::vector<double>> by_point;
  for (std::size_t i = 1; i < runs.size(); ++i) {
    by_point[std::stoi(runs[i][point])].push_back(std::stod(runs[i][tput]));
  }
  REQUIRE(reb.size() == 1 + 5);
  REQUIRE(reb[1][col(reb[0], "migration")] == "off");
  REQUIRE(reb[1][col(reb[0], "throughput_change")].empty());
  const std::vector<double>& off = by_point[0];
  const double off_mean = (off[0] + off[1]) / 2.0;
  for (int p = 1; p <= 4; ++p) {
    const std::vector<double>& x = by_point[p];
    const double want = ((x[0] - off[0]) + (x[1] - off[1])) / 2.0 / off_mean;
    REQUIRE(std::stod(reb[static_cast<std::size_t>(p) + 1][col(reb[0], "throughput_change")]) ==
            Approx(want).margin(1e-12));
  }
  // Stopping the world stalls; moving layer by layer never does.
  REQUIRE(std::stod(reb[2][col(reb[0], "stall_ms")]) > 0.0);
  REQUIRE(std::stod(reb[4][col(reb[0], "stall_ms")]) == 0.0);
  const auto be = test::csv_file_rows(dir / "out" / "break_even.csv");
  REQUIRE(be.size() == 1 + 2);
  REQUIRE(be[1][col(be[0], "migration")] == "stop_the_world");
  REQUIRE(be[2][col(be[0], "migration")] == "layer_by_layer");
  fs::remove_all(dir);
}

TEST_CASE("a rebalance study replays an engine's recorded load history") {
  // The sample EPLB load history of examples/engines (DeepSeek-V2-Lite, 12 steps of per-expert loads),
  // imported as a routing trace, is the drifting load the study rebalances against.
  const fs::path dir = fs::temp_directory_path() / "epsim-rebalance-history";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string history = std::string(EPSIM_SOURCE_DIR) + "/examples/engines/load-history.json";
  const test::Cli imported =
      test::cli({"trace", "import", history, (dir / "history.trace").string(), "--model", "deepseek-v2-lite"});
  INFO(imported.err);
  REQUIRE(imported.code == 0);
  std::ofstream(dir / "study.toml")
      << "[study]\nkind = \"rebalance\"\nreplications = 2\n[study.rebalance]\ninterval_steps = [4, 16]\n"
         "options = { window_steps = 4 }\n"
         "[base.model]\npreset = \"deepseek-v2-lite\"\n[base.cluster]\npreset = \"hgx-h100\"\nnodes = 1\n"
         "[base.parallel]\nep_size = 8\n[base.workload]\nrate_rps = 1000.0\nnum_requests = 64\n"
         "[base.workload.prompt_tokens]\ndistribution = \"fixed\"\nvalue = 256\n"
         "[base.workload.output_tokens]\ndistribution = \"fixed\"\nvalue = 64\n"
         "[base.routing]\nsource = \"trace\"\ntrace_file = \""
      << (dir / "history.trace").string() << "\"\n[base.policy]\nplacement = \"eplb\"\n";
  const test::Cli r =
      test::cli({"sweep", (dir / "study.toml").string(), "--out", (dir / "out").string(), "--progress", "none"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto reb = test::csv_file_rows(dir / "out" / "rebalance.csv");
  REQUIRE(reb.size() == 1 + 3);
  // Every 4 steps over a run of ~70 steps: the trigger re-solved EPLB on the replayed loads and moved experts.
  REQUIRE(std::stod(reb[2][col(reb[0], "rebalances")]) > 5.0);
  REQUIRE(std::stod(reb[2][col(reb[0], "gb_moved")]) > 0.0);
  REQUIRE_FALSE(reb[2][col(reb[0], "throughput_change")].empty());
  fs::remove_all(dir);
}
