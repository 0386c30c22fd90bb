// SPDX-License-Identifier: Apache-2.0
// The what-if scaling curves join only points of one system family at one offered load: a rate axis
// crossed with the setups gives a curve per rate, a rate zipped with the setups (a load per GPU) one
// curve, another preset its own curve, a policy axis a curve per policy; and the report's scaling figure
// draws exactly those series.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "experiments/studies/scaling_series.hpp"
#include "experiments/studies/study_plan.hpp"
#include "experiments/studies/study_spec.hpp"
#include "report/csv_table.hpp"
#include "report/report_inputs.hpp"
#include "report/study_figures.hpp"
#include "tests/support/cli.hpp"

namespace fs = std::filesystem;
using namespace epsim;
using namespace epsim::experiments;

namespace {

const std::string k_data = EPSIM_TEST_DATA_DIR;

// small.toml (Mixtral on hgx-h100, 2 nodes x 2 GPUs) at EP2 on one node, EP4 on two, and EP4 on two
// nodes of the hgx-h200 preset.
const std::string k_setups = R"([study]
kind = "whatif"
base = "small.toml"
report = ["slo.goodput_rps"]
[[axis]]
name = "setup"
levels = [
  { label = "H100x2", set = { cluster.nodes = 1, cluster.speed_factors = [1.0, 0.9], parallel.ep_size = 2 } },
  { label = "H100x4", set = { parallel.ep_size = 4 } },
  { label = "H200x4", set = { cluster.preset = "hgx-h200", cluster.gpus_per_node = 2, parallel.ep_size = 4 } },
]
)";

// Point index -> series label.
std::map<int, std::string> series_of(const std::string& text) {
  const StudySpec spec = load_study_text(text, "study.toml", k_data);
  const StudyPlan plan = plan_study(spec);
  const std::vector<ScalingSeries> s = scaling_series(spec, plan);
  REQUIRE(s.size() == plan.points.size());
  std::map<int, std::string> out;
  for (const StudyPoint& p : plan.points) {
    out[p.index] = s[static_cast<std::size_t>(p.index)].series;
  }
  return out;
}

}  // namespace

TEST_CASE("a rate axis crossed with the setups: one curve per system family and rate") {
  // Points: setup-major, rates 2 and 4 req/s: 0 = H100x2@2, 1 = H100x2@4, 2 = H100x4@2, ...
  const auto s = series_of(k_setups + "[[axis]]\nkey = \"workload.rate_rps\"\nvalues = [2.0, 4.0]\n");
  REQUIRE(s.size() == 6);
  CHECK(s.at(0) == "HGX H100 nodes, rail-optimised NDR, 2 req/s");
  CHECK(s.at(2) == "HGX H100 nodes, rail-optimised NDR, 2 req/s");
  CHECK(s.at(1) == "HGX H100 nodes, rail-optimised NDR, 4 req/s");
  CHECK(s.at(3) == "HGX H100 nodes, rail-optimised NDR, 4 req/s");
  CHECK(s.at(4) == "HGX H200 nodes, rail-optimised NDR, 2 req/s");
  CHECK(s.at(5) == "HGX H200 nodes, rail-optimised NDR, 4 req/s");
}

TEST_CASE("a rate zipped with the setups, the same per GPU: one curve per system family") {
  const auto s = series_of(k_setups +
                           "[[axis]]\nkey = \"workload.rate_rps\"\nvalues = [1.0, 2.0, 2.0]\n"
                           "labels = [\"1\", \"2\", \"2 (H200)\"]\nzip_with = \"setup\"\n");
  REQUIRE(s.size() == 3);
  CHECK(s.at(0) == "HGX H100 nodes, rail-optimised NDR, 0.5 req/s per GPU");
  CHECK(s.at(1) == "HGX H100 nodes, rail-optimised NDR, 0.5 req/s per GPU");
  CHECK(s.at(2) == "HGX H200 nodes, rail-optimised NDR, 0.5 req/s per GPU");
}

TEST_CASE("a policy axis leaves the setup alone: a curve per policy") {
  const auto s = series_of(k_setups + "[[axis]]\nname = \"policy\"\npolicies = [\"linear\", \"eplb\"]\n");
  REQUIRE(s.size() == 6);
  CHECK(s.at(0) == "HGX H100 nodes, rail-optimised NDR, 4 req/s, linear");
  CHECK(s.at(2) == "HGX H100 nodes, rail-optimised NDR, 4 req/s, linear");
  CHECK(s.at(1) == "HGX H100 nodes, rail-optimised NDR, 4 req/s, eplb");
  CHECK(s.at(3) == "HGX H100 nodes, rail-optimised NDR, 4 req/s, eplb");
  CHECK(s.at(4) == "HGX H200 nodes, rail-optimised NDR, 4 req/s, linear");
}

TEST_CASE("one preset name over two fabrics: two families, named by GPU and links") {
  std::string text = k_setups;
  text.insert(text.rfind("]\n"),
              R"(  { label = "H100x4 slow NICs", set = { parallel.ep_size = 4, cluster.inter_node.bw_gbps = 25.0 } },
)");
  const auto s = series_of(text);
  REQUIRE(s.size() == 4);
  CHECK(s.at(0) == s.at(1));
  CHECK(s.at(1) != s.at(3));
  CHECK(s.at(3).find("25 GB/s NICs") != std::string::npos);
}

TEST_CASE("the report's scaling figure draws one series per family and rate, never a line through rates") {
  const fs::path dir = fs::temp_directory_path() / "epsim-scaling-series";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path file = dir / "study.toml";
  std::string text = k_setups + "[[axis]]\nkey = \"workload.rate_rps\"\nvalues = [2.0, 4.0]\n";
  text.replace(text.find("base = \"small.toml\""), 19, "base = \"" + k_data + "/small.toml\"");
  std::ofstream(file) << text;
  const test::Cli r = test::cli({"sweep", file.string(), "--out", (dir / "out").string(), "--progress", "none"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const report::ReportInputs in = report::load_report_inputs({dir / "out"});
  REQUIRE(in.studies.size() == 1);
  const std::vector<report::Figure> figures = report::study_figures(in.studies[0]);
  const auto fig =
      std::find_if(figures.begin(), figures.end(), [](const report::Figure& f) { return f.id.ends_with("-scaling"); });
  REQUIRE(fig != figures.end());
  const report::CsvTable rows = report::CsvTable::parse(fig->csv, "scaling figure");
  // Each series's (GPUs) points: every series one family at one rate, two GPU counts for hgx-h100.
  std::map<std::string, std::multiset<double>> gpus;
  for (std::size_t i = 0; i < rows.rows(); ++i) {
    gpus[rows.text(i, rows.column("series"))].insert(rows.number(i, rows.column("x")));
  }
  REQUIRE(gpus.size() == 4);
  CHECK(gpus.at("HGX H100 nodes, rail-optimised NDR, 2 req/s") == std::multiset<double>{2.0, 4.0});
  CHECK(gpus.at("HGX H100 nodes, rail-optimised NDR, 4 req/s") == std::multiset<double>{2.0, 4.0});
  CHECK(gpus.at("HGX H200 nodes, rail-optimised NDR, 2 req/s") == std::multiset<double>{4.0});
  CHECK(gpus.at("HGX H200 nodes, rail-optimised NDR, 4 req/s") == std::multiset<double>{4.0});
  fs::remove_all(dir);
}
