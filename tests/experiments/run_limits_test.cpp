// SPDX-License-Identifier: Apache-2.0
// metrics.limits in summary.json, the printed summary, a study's table, runs.csv and report: small.toml (EP4, 4 DP
// ranks, 40 requests) with 1 seat per rank at 100 req/s holds every rank's queue behind its one seat; with 32 seats at
// its own 4 req/s (Little: about 4 req/s x 0.3 s = 1.2 requests in the system) no cap binds.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "experiments/assembly/build_simulation.hpp"
#include "experiments/assembly/experiment_config.hpp"
#include "experiments/assembly/load_window.hpp"
#include "experiments/assembly/results_writer.hpp"
#include "experiments/assembly/run_metrics.hpp"
#include "report/csv_table.hpp"
#include "report/limits_notice.hpp"
#include "report/report_inputs.hpp"
#include "tests/support/cli.hpp"

namespace fs = std::filesystem;
using namespace epsim;

namespace {

const std::string k_data = EPSIM_TEST_DATA_DIR;

struct Run {
  experiments::ExperimentConfig cfg;
  serving::SimulationResult res;
};

Run run(const std::vector<std::string>& sets) {
  Run r{experiments::load_config(k_data + "/small.toml", sets), {}};
  serving::Simulator sim(experiments::build_simulation(r.cfg, experiments::profile_pool_windows(r.cfg)));
  r.res = sim.run();
  return r;
}

// The line of `text` holding `key` ("" without one).
std::string line_of(const std::string& text, const std::string& key) {
  const std::size_t at = text.find(key);
  return at == std::string::npos ? "" : text.substr(at, text.find('\n', at) - at);
}

}  // namespace

TEST_CASE("a run held back by its seats says so in summary.json, its metrics and its printed summary") {
  const Run r = run({"scheduler.max_running_requests=1", "workload.rate_rps=100"});
  const nlohmann::ordered_json m = experiments::metrics_json(r.cfg, r.res);
  const auto& limits = m.at("limits");
  CHECK(limits.at("rank_steps").get<std::int64_t>() == 4 * r.res.summary.steps);  // 4 DP ranks per step
  CHECK(limits.at("seats").at("cap").get<std::int64_t>() == 1);
  CHECK(limits.at("batch_tokens").at("cap").get<std::int64_t>() == 2048);
  CHECK(limits.at("seats").at("binding_fraction").get<double>() > 0.5);
  CHECK(limits.at("limited_by") == nlohmann::ordered_json::array({"seats"}));
  const auto metrics = experiments::run_metrics(r.cfg, r.res);
  CHECK(experiments::metric_value(metrics, "limits.seats.binding_fraction") ==
        Approx(limits.at("seats").at("binding_fraction").get<double>()));
  CHECK(experiments::metric_value(metrics, "limits.kv_cache.binding_fraction") == 0.0);
  const std::string text = experiments::human_summary(r.cfg, r.res);
  CHECK(text.find("limited by a configured cap: scheduler.max_running_requests (seats) bound ") != std::string::npos);
}

TEST_CASE("a run below every cap lists none and prints no limits line") {
  const Run r = run({});
  const nlohmann::ordered_json m = experiments::metrics_json(r.cfg, r.res);
  CHECK(m.at("limits").at("limited_by").empty());
  CHECK(m.at("limits").at("seats").at("bound_rank_steps").get<std::int64_t>() == 0);
  CHECK(experiments::human_summary(r.cfg, r.res).find("limited by") == std::string::npos);
}

TEST_CASE("a study says which points a cap held back: terminal table, runs.csv, the report's note") {
  const fs::path dir = fs::temp_directory_path() / "epsim-run-limits-study";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path file = dir / "study.toml";
  std::ofstream(file) << "[study]\nkind = \"whatif\"\nbase = \"" << k_data << "/small.toml\"\n"
                      << "replications = 1\nreport = [\"slo.attainment\"]\n"
                      << "[[axis]]\nkey = \"scheduler.max_running_requests\"\nvalues = [1, 256]\n"
                      << "[[axis]]\nkey = \"workload.rate_rps\"\nvalues = [100.0]\nlabels = [\"fast\"]\n";
  const test::Cli r = test::cli({"sweep", file.string(), "--out", (dir / "out").string(), "--progress", "none"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  // Point 0 (1 seat) is named, point 1 (256 seats, 40 requests in all) is not.
  CHECK(r.out.find("limited by a configured cap") != std::string::npos);
  CHECK(r.out.find("point 0 (1, fast): scheduler.max_running_requests (seats) bound ") != std::string::npos);
  // (The token budget may hold point 1's prompts back in a burst; its seats never.)
  CHECK(line_of(r.out, "point 1 (256, fast)").find("seats") == std::string::npos);
  const report::CsvTable runs = report::CsvTable::load(dir / "out" / "runs.csv");
  const std::size_t seats = runs.column("limits.seats.binding_fraction");
  CHECK(runs.number(0, seats) > 0.5);
  CHECK(runs.number(1, seats) == 0.0);
  const report::ReportInputs in = report::load_report_inputs({dir / "out"});
  REQUIRE(in.studies.size() == 1);
  const std::string note = report::study_limits_html(in.studies[0]);
  CHECK(note.find("Limited by a configured cap") != std::string::npos);
  CHECK(note.find("point 0 (") != std::string::npos);
  CHECK(note.find("seats (scheduler.max_running_requests) bound ") != std::string::npos);
  CHECK(line_of(note, "point 1 (").find("seats") == std::string::npos);
  fs::remove_all(dir);
}
