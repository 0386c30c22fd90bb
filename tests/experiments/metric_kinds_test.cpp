// SPDX-License-Identifier: Apache-2.0
// Every metric a run reports has a kind (core/metric_kind.hpp): the columns of runs.csv from sweeps
// over every policy bundle (rebalancing statistics, curve-fit figures) and over disaggregated pools
// (KV transfers, per-pool requests), plus the study's own [study.max_rate] metrics.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/metric_kind.hpp"
#include "report/csv_table.hpp"
#include "tests/support/cli.hpp"

namespace fs = std::filesystem;

namespace {

const std::string k_data = EPSIM_TEST_DATA_DIR;

// The metric columns of runs.csv of a sweep of `study` (those after cluster_seed).
std::vector<std::string> swept_metrics(const fs::path& dir, const std::string& study) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "study.toml") << study;
  const epsim::test::Cli r =
      epsim::test::cli({"sweep", (dir / "study.toml").string(), "--out", (dir / "out").string(), "--progress", "none"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto runs = epsim::report::CsvTable::load(dir / "out" / "runs.csv");
  const auto& h = runs.header();
  std::vector<std::string> out(h.begin() + static_cast<std::ptrdiff_t>(runs.column("cluster_seed") + 1), h.end());
  fs::remove_all(dir);
  return out;
}

}  // namespace

TEST_CASE("every metric a run or a study reports has a kind") {
  const fs::path dir = fs::temp_directory_path() / "epsim-metric-kinds";
  std::vector<std::string> names = swept_metrics(
      dir, "[study]\nbase = \"" + k_data +
               "/small.toml\"\n[[axis]]\nname = \"policy\"\npolicies = [\"linear\", \"eplb\", \"gem\", \"vibe\", "
               "\"director\", \"metro\", \"grace\"]\n");
  const std::vector<std::string> pools = swept_metrics(
      dir, "[study]\nbase = \"" + k_data + "/three_pools.toml\"\n[[axis]]\nkey = \"run.seed\"\nvalues = [7]\n");
  names.insert(names.end(), pools.begin(), pools.end());
  // The runner's [study.max_rate] metrics (experiments/studies/study_runner.cpp).
  names.insert(names.end(), {"max_rate_rps", "max_rate_rps_per_gpu", "max_rate_bracketed"});
  // The families the optional parts add are present, so the check covers them.
  const auto has_prefix = [&](const std::string& p) {
    return std::any_of(names.begin(), names.end(), [&](const std::string& n) { return n.starts_with(p); });
  };
  for (const char* p :
       {"rebalancing.", "curve_fit.", "kv_transfers.", "pools.", "slo.attainment", "gpu_busy_fraction"}) {
    INFO(p);
    REQUIRE(has_prefix(p));
  }
  for (const std::string& n : names) {
    INFO(n);
    REQUIRE(epsim::core::classify_metric(n).has_value());
  }
}
