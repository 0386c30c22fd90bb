// SPDX-License-Identifier: Apache-2.0
// Studies (epsim sweep): the file, the grid, seed families and common random numbers, the interval and
// pairing maths of the outputs against hand values, and that a sweep resumed from its journal, or run
// on more threads, writes exactly the bytes of one uninterrupted run.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/csv_lines.hpp"
#include "core/directory_lock.hpp"
#include "core/random_streams.hpp"
#include "experiments/assembly/build_simulation.hpp"
#include "experiments/cli/cli.hpp"
#include "experiments/studies/study_journal.hpp"
#include "experiments/studies/study_plan.hpp"
#include "experiments/studies/study_report.hpp"
#include "experiments/studies/study_spec.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/csv.hpp"
#include "workloads/request_generator.hpp"

namespace fs = std::filesystem;
using namespace epsim;
using namespace epsim::experiments;
using Catch::Contains;

namespace {

const std::string k_data = EPSIM_TEST_DATA_DIR;

StudySpec study(const std::string& text) {
  return load_study_text(text, "study.toml", k_data);
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

using epsim::test::Cli;
using epsim::test::cli;

// The lines of `csv` whose cells start with `prefix` (comma-separated).
std::vector<std::string> rows_starting(const std::string& csv, const std::string& prefix) {
  std::vector<std::string> out;
  std::istringstream in(csv);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) == 0) {
      out.push_back(line);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("a study's grid: product of axes, zipped axes move together, policy bundles bring prerequisites") {
  const StudySpec s = study(R"(
[study]
base = "small.toml"
[[axis]]
name = "policy"
policies = ["linear", "metro"]
[[axis]]
key = "workload.rate_rps"
values = [2.0, 4.0, 8.0]
[[axis]]
key = "workload.num_requests"
values = [10, 20, 30]
zip_with = "workload.rate_rps"
)");
  REQUIRE(s.axes.size() == 3);
  const StudyPlan plan = plan_study(s);
  REQUIRE(plan.points.size() == 6);  // 2 policies x 3 (rate, count) pairs
  // The last axis of the product varies fastest; the zipped count follows the rate.
  REQUIRE(plan.points[1].labels == std::vector<std::string>{"linear", "4", "20"});
  REQUIRE(plan.points[5].labels == std::vector<std::string>{"metro", "8", "30"});
  REQUIRE(plan.points[5].config.workload.arrivals.rate_rps == 8.0);
  REQUIRE(plan.points[5].config.workload.num_requests == 30);
  // metro routes among replicas: its bundle brings EPLB and one redundant slot per GPU of EP4.
  REQUIRE(plan.points[5].config.policy.routing == "metro");
  REQUIRE(plan.points[5].config.policy.placement == "eplb");
  REQUIRE(plan.points[5].config.primary_pool().redundant_experts == 4);
  REQUIRE(plan.points[0].config.primary_pool().redundant_experts == 0);
  REQUIRE(plan.warnings.empty());
}

TEST_CASE("a bad study file is refused with the file, the key and what was expected") {
  const auto fails = [](const std::string& text, const std::string& what) {
    INFO(text);
    REQUIRE_THROWS_WITH(study(text), Contains(what));
  };
  fails("[study]\nbase = \"small.toml\"\nreplicas = 3\n", "study.toml: study.replicas: unknown key");
  fails("[study]\n", "give the base experiment");
  fails("[study]\nbase = \"nope.toml\"\n", "cannot open the base experiment");
  fails("[study]\nbase = \"small.toml\"\nkind = \"survey\"\n", "unknown kind \"survey\"");
  fails("[study]\nbase = \"small.toml\"\n[[axis]]\nvalues = [1, 2]\n",
        "axis[0].key: an axis of values needs the config key");
  fails("[study]\nbase = \"small.toml\"\n[[axis]]\nname = \"p\"\npolicies = [\"linear\", \"magic\"]\n",
        "unknown policy bundle \"magic\"");
  fails("[study]\nbase = \"small.toml\"\n[[axis]]\nkey = \"a.b\"\nvalues = [1, 1]\n", "label \"1\" appears twice");
  fails(
      "[study]\nbase = \"small.toml\"\n[[axis]]\nkey = \"a.b\"\nvalues = [1, 2]\n[[axis]]\nkey = \"c.d\"\nvalues = "
      "[1]\n"
      "zip_with = \"a.b\"\n",
      "zipped axes need the same number of levels");
  fails("[study]\nbase = \"small.toml\"\nbaseline = \"policy=linear\"\n", "naming an axis of the study");
  fails("[study]\nbase = \"small.toml\"\nkind = \"compare\"\n", "a compare study needs an axis of arrival rates");
  fails("[study]\nbase = \"small.toml\"\n[study.objective]\nmaximize = \"x\"\nsubject_to = [\"y > 1\"]\n",
        "expected \"metric >= number\"");
  // A key the experiment does not have is found when the point is loaded, before anything runs.
  REQUIRE_THROWS_WITH(
      plan_study(study("[study]\nbase = \"small.toml\"\n[[axis]]\nkey = \"workload.rate\"\nvalues = [1]\n")),
      Contains("point 0 (workload.rate=1)"));
}

TEST_CASE("replications seed each family apart, common random numbers share them across points") {
  const std::string axes = R"(
[[axis]]
key = "policy.placement"
values = ["linear", "gem"]
)";
  const StudySpec clusters = study(R"(
[study]
kind = "montecarlo"
base = "small.toml"
replications = 2
)" + axes);
  REQUIRE(!clusters.vary.workload);
  REQUIRE(clusters.vary.cluster);
  const StudyPlan plan = plan_study(clusters);
  REQUIRE(plan.warnings.size() == 1);  // small.toml's speeds are an explicit list: draws would not vary
  REQUIRE_THAT(plan.warnings[0], Contains("cluster draws"));
  const auto cfg = [&](const StudySpec& s, const StudyPlan& p, int point, int rep) {
    return run_config(s, p, p.run(point * p.replications + rep));
  };
  const ExperimentConfig a0 = cfg(clusters, plan, 0, 0);
  const ExperimentConfig a1 = cfg(clusters, plan, 0, 1);
  const ExperimentConfig b1 = cfg(clusters, plan, 1, 1);
  REQUIRE(a0.seed_of(SeedFamily::workload) == a1.seed_of(SeedFamily::workload));
  REQUIRE(a0.seed_of(SeedFamily::cluster) + 1 == a1.seed_of(SeedFamily::cluster));
  REQUIRE(a0.seed == a1.seed);
  // Common random numbers: replication 1 has the same seeds at every point.
  REQUIRE(b1.seed_of(SeedFamily::cluster) == a1.seed_of(SeedFamily::cluster));
  REQUIRE(b1.seed_of(SeedFamily::workload) == a1.seed_of(SeedFamily::workload));

  // With a drawn cluster, a new cluster seed draws new speeds and leaves the arrivals alone.
  const std::vector<std::string> normal{"cluster.speed_factors=[]", "cluster.variability.kind=\"normal\"",
                                        "cluster.variability.cv=0.05"};
  ExperimentConfig base = load_config(k_data + "/small.toml", normal);
  const ExperimentConfig r1 = with_replication(base, 1, VariedFamilies{false, true, false});
  REQUIRE(resolved_speed_factors(base) != resolved_speed_factors(r1));
  const auto arrivals = [](const ExperimentConfig& c) {
    workloads::RequestGenerator g(c.workload, core::RandomStreams(c.seed_of(SeedFamily::workload)));
    std::vector<core::Time> t;
    for (int i = 0; i < 10; ++i) {
      t.push_back(g.next()->arrival_ns);
    }
    return t;
  };
  REQUIRE(arrivals(base) == arrivals(r1));
  // The reverse: new arrivals, the same cluster.
  const ExperimentConfig w1 = with_replication(base, 1, VariedFamilies{true, false, false});
  REQUIRE(resolved_speed_factors(base) == resolved_speed_factors(w1));
  REQUIRE(arrivals(base) != arrivals(w1));

  // Without common random numbers every run of the study has seeds of its own.
  const StudySpec independent = study(R"(
[study]
base = "small.toml"
replications = 2
common_random_numbers = false
)" + axes);
  const StudyPlan ip = plan_study(independent);
  REQUIRE(cfg(independent, ip, 1, 1).seed_of(SeedFamily::workload) !=
          cfg(independent, ip, 0, 1).seed_of(SeedFamily::workload));
}

TEST_CASE("points.csv: mean, standard deviation, 95 % interval and paired difference by hand") {
  const StudySpec s = study(R"(
[study]
base = "small.toml"
replications = 3
baseline = "policy.placement=linear"
[[axis]]
key = "policy.placement"
values = ["linear", "gem"]
)");
  const StudyPlan plan = plan_study(s);
  // Records made by hand: linear {0.5, 1.5, 2.0}, gem {1, 2, 3}.
  StudyRecords records(6);
  const std::vector<double> linear{0.5, 1.5, 2.0};
  const std::vector<double> gem{1.0, 2.0, 3.0};
  for (int r = 0; r < 3; ++r) {
    records[static_cast<std::size_t>(r)].metrics = {{"x", linear[static_cast<std::size_t>(r)]}};
    records[static_cast<std::size_t>(3 + r)].metrics = {{"x", gem[static_cast<std::size_t>(r)]}};
  }
  const std::string csv = points_csv(s, plan, records);
  REQUIRE_THAT(csv,
               Catch::StartsWith("point,policy.placement,metric,n,mean,std,ci95_low,ci95_high,baseline_diff,"
                                 "baseline_diff_ci95_low,baseline_diff_ci95_high,baseline_rel_diff,kind,small_n\n"));
  const auto cells = test::csv_cells(rows_starting(csv, "1,gem,x,").at(0));
  // gem: mean 2, s = 1, half-width t(0.975, 2) / sqrt(3) = 4.30265 / 1.73205 = 2.48414.
  REQUIRE(std::stod(cells[4]) == Approx(2.0));
  REQUIRE(std::stod(cells[5]) == Approx(1.0));
  REQUIRE(std::stod(cells[6]) == Approx(2.0 - 2.48414).epsilon(1e-5));
  REQUIRE(std::stod(cells[7]) == Approx(2.0 + 2.48414).epsilon(1e-5));
  // Paired differences {0.5, 0.5, 1}: mean 2/3, s = 0.2886751, half-width 4.302653 * 0.2886751 / sqrt(3) =
  // 0.7171088; relative to the baseline's mean 4/3: 0.5.
  REQUIRE(std::stod(cells[8]) == Approx(2.0 / 3.0));
  REQUIRE(std::stod(cells[9]) == Approx(2.0 / 3.0 - 0.7171088).margin(1e-6));
  REQUIRE(std::stod(cells[10]) == Approx(2.0 / 3.0 + 0.7171088).margin(1e-6));
  REQUIRE(std::stod(cells[11]) == Approx(0.5));
  // The distribution over replications: min, p10, p25, p50, p75, p90, max (linear interpolation).
  const auto dist = test::csv_cells(rows_starting(distribution_csv(s, plan, records), "1,gem,x,").at(0));
  REQUIRE(dist.size() == 11);
  REQUIRE(std::stod(dist[4]) == 1.0);
  REQUIRE(std::stod(dist[5]) == Approx(1.2));
  REQUIRE(std::stod(dist[7]) == Approx(2.0));
  REQUIRE(std::stod(dist[10]) == 3.0);
}

TEST_CASE("a tiny study's points.csv, scaling.csv and table keep every interval in its metric's range") {
  const StudySpec s = study(R"(
[study]
base = "small.toml"
replications = 2
baseline = "policy.placement=linear"
report = ["slo.attainment", "goodput_rps_per_gpu", "ttft_ms.p90"]
[[axis]]
key = "policy.placement"
values = ["linear", "gem"]
)");
  const StudyPlan plan = plan_study(s);
  // Issue 35's reproduced values (n = 2): attainment {0.99, 0.87} gave [0.17, 1.69], goodput per GPU
  // {0.4994, 0.4206} gave [-0.04, 0.96], p90 TTFT {12684, 18216} ms gave [-1.97e4, 5.06e4]; the baseline's
  // attainment near 0 gave a change of +3,000 %.
  StudyRecords records(4);
  const double att[2][2] = {{0.02, 0.04}, {0.99, 0.87}};
  const double gpg[2][2] = {{0.3, 0.31}, {0.4994, 0.4206}};
  const double ttft[2][2] = {{900, 1000}, {12684, 18216}};
  for (int p = 0; p < 2; ++p) {
    for (int r = 0; r < 2; ++r) {
      records[static_cast<std::size_t>(2 * p + r)].metrics = {
          {"slo.attainment", att[p][r]}, {"goodput_rps_per_gpu", gpg[p][r]}, {"ttft_ms.p90", ttft[p][r]}};
    }
  }
  const std::string csv = points_csv(s, plan, records);
  const auto cells = [&](const std::string& metric) {
    return test::csv_cells(rows_starting(csv, "1,gem," + metric + ",").at(0));
  };
  // point, axis, metric, n, mean, std, ci95_low, ci95_high, diff, diff_low, diff_high, rel, kind, small_n
  const auto a = cells("slo.attainment");
  REQUIRE(a.size() == 14);
  REQUIRE(std::stod(a[6]) == Approx(0.1676277158).epsilon(1e-8));
  REQUIRE(std::stod(a[7]) == 1.0);
  // The change of a proportion: a difference (+0.9 = +90 points) within [-1, 1], no relative change.
  REQUIRE(std::stod(a[8]) == Approx(0.9));
  REQUIRE(std::stod(a[9]) == Approx(0.9 - 12.70620474 * 0.07).margin(1e-8));
  REQUIRE(std::stod(a[10]) == 1.0);
  REQUIRE(a[11].empty());
  REQUIRE(a[12] == "proportion");
  REQUIRE(a[13] == "1");
  const auto g = cells("goodput_rps_per_gpu");
  REQUIRE(std::stod(g[6]) == 0.0);
  REQUIRE(std::stod(g[7]) == Approx(0.9606244666).epsilon(1e-8));
  REQUIRE(std::stod(g[11]) == Approx(0.155 / 0.305));  // relative change kept for non-negative metrics
  REQUIRE(g[12] == "non-negative");
  const auto t = cells("ttft_ms.p90");
  REQUIRE(std::stod(t[6]) == 0.0);
  REQUIRE(std::stod(t[7]) == Approx(50595.3623).epsilon(1e-8));
  // No row of points.csv or scaling.csv leaves its range.
  for (const std::string& row : rows_starting(csv, "")) {
    const auto c = test::csv_cells(row);
    if (c[0] == "point") {
      continue;
    }
    INFO(row);
    const double lo = c[6].empty() ? 0.0 : std::stod(c[6]);
    const double hi = c[7].empty() ? 0.0 : std::stod(c[7]);
    REQUIRE(lo >= 0.0);
    REQUIRE(hi <= (c[12] == "proportion" ? 1.0 : INFINITY));
  }
  const std::string scaling = scaling_csv(s, plan, records);
  std::vector<std::string> srow;  // the system and series cells are quoted (they hold commas)
  REQUIRE(core::split_csv_quoted(rows_starting(scaling, "1,gem,").at(0), srow));
  INFO(scaling);
  // point, axis, system, series, gpus, ep_size, then mean, low, high per report metric.
  REQUIRE(std::stod(srow[8]) == 1.0);
  REQUIRE(std::stod(srow[10]) == 0.0);
  REQUIRE(std::stod(srow[13]) == 0.0);
  // The table: asymmetric intervals, the change of attainment in points, and a warning about n = 2.
  const std::string table = study_table(s, plan, records);
  INFO(table);
  REQUIRE_THAT(table, Contains("0.93 [0.1676, 1]"));
  REQUIRE_THAT(table, Contains("1.545e+04 [0, 5.06e+04]"));
  REQUIRE_THAT(table, Contains("+90 pp [+1.06, +100]"));
  REQUIRE_THAT(table, Contains("warning: 2 replications per point (< 3)"));
  REQUIRE_FALSE(table.find("1.69") != std::string::npos);
}

TEST_CASE("the max sustainable rate from an attainment-vs-rate curve") {
  bool censored = false;
  // Crosses 0.9 between 2 (0.95) and 4 (0.7): 2 + (0.95 - 0.9) / (0.95 - 0.7) * 2 = 2.4.
  REQUIRE(max_rate_from_curve({1, 2, 4}, {1.0, 0.95, 0.7}, 0.9, censored) == Approx(2.4));
  REQUIRE(!censored);
  REQUIRE(max_rate_from_curve({1, 2, 4}, {0.8, 0.7, 0.1}, 0.9, censored) == 0.0);
  REQUIRE(max_rate_from_curve({1, 2, 4}, {1.0, 1.0, 0.95}, 0.9, censored) == 4.0);
  REQUIRE(censored);
}

TEST_CASE("the objective ranks feasible points first, best first") {
  const StudySpec s = study(R"(
[study]
base = "small.toml"
[study.objective]
maximize = "goodput"
subject_to = ["attainment >= 0.9"]
[[axis]]
key = "workload.rate_rps"
values = [1, 2, 3]
)");
  const StudyPlan plan = plan_study(s);
  StudyRecords records(3);
  records[0].metrics = {{"goodput", 1.0}, {"attainment", 1.0}};
  records[1].metrics = {{"goodput", 2.0}, {"attainment", 0.95}};
  records[2].metrics = {{"goodput", 2.5}, {"attainment", 0.8}};  // the most goodput, but misses the SLO
  const std::string csv = ranking_csv(s, plan, records);
  REQUIRE_THAT(csv, Contains("rank,point,workload.rate_rps,goodput,feasible,attainment >= 0.9\n"
                             "1,1,2,2,1,0.95\n2,0,1,1,1,1\n3,2,3,2.5,0,0.8\n"));
}

TEST_CASE("a sweep gives the same bytes on 1 or 2 threads and after resuming from a cut journal", "[slow]") {
  const fs::path dir = fs::temp_directory_path() / "epsim-study-test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path file = dir / "study.toml";
  std::ofstream(file) << "[study]\nkind = \"compare\"\nbase = \"" << k_data << "/small.toml\"\nreplications = 2\n"
                      << "[[axis]]\nname = \"policy\"\npolicies = [\"linear\", \"eplb\"]\n"
                      << "[[axis]]\nkey = \"workload.rate_rps\"\nvalues = [2.0, 8.0]\n";
  const auto sweep = [&](const std::string& out, const std::string& jobs) {
    return cli({"sweep", file.string(), "--out", (dir / out).string(), "-j", jobs, "--progress", "none"});
  };
  const Cli one = sweep("one", "1");
  INFO(one.err);
  REQUIRE(one.code == 0);
  REQUIRE_THAT(one.out, Contains("max sustainable rate"));
  REQUIRE(sweep("two", "2").code == 0);
  for (const char* f : {"runs.csv", "points.csv", "max_rate.csv"}) {
    REQUIRE(slurp(dir / "one" / f) == slurp(dir / "two" / f));
  }
  REQUIRE(fs::exists(dir / "one" / "study.json"));
  REQUIRE(rows_starting(slurp(dir / "one" / "runs.csv"), "").size() == 9);  // header + 2 x 2 x 2 runs

  // Cut the journal as a SIGKILL would: three whole records and half of the fourth; drop the outputs.
  const fs::path journal = dir / "two" / "journal" / "rank-0.jsonl";
  const std::string text = slurp(journal);
  std::size_t cut = 0;
  for (int i = 0; i < 3; ++i) {
    cut = text.find('\n', cut) + 1;
  }
  const std::size_t next = text.find('\n', cut);
  std::ofstream(journal, std::ios::binary | std::ios::trunc) << text.substr(0, cut + (next - cut) / 2);
  for (const char* f : {"runs.csv", "points.csv", "max_rate.csv", "study.json"}) {
    fs::remove(dir / "two" / f);
  }
  // A killed sweep's temporary file (no process has that PID: pid_max is at most 2^22).
  std::ofstream(dir / "two" / "points.csv.tmp-2147483547") << "half-written";
  const Cli resumed = sweep("two", "1");
  REQUIRE(resumed.code == 0);
  REQUIRE_THAT(resumed.err, Contains("3 from the journal, 5 to run"));
  for (const char* f : {"runs.csv", "points.csv", "max_rate.csv"}) {
    REQUIRE(slurp(dir / "one" / f) == slurp(dir / "two" / f));
  }
  REQUIRE(!fs::exists(dir / "two" / "points.csv.tmp-2147483547"));
  // Everything done: a third invocation runs nothing and writes the same bytes again.
  const Cli again = sweep("two", "2");
  REQUIRE_THAT(again.err, Contains("8 from the journal, 0 to run"));
  REQUIRE(slurp(dir / "one" / "points.csv") == slurp(dir / "two" / "points.csv"));
  fs::remove_all(dir);
}

TEST_CASE("a sweep starts its longest runs first and reports every run's CPU time, outputs in plan order") {
  const fs::path dir = fs::temp_directory_path() / "epsim-study-longest-first";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path file = dir / "study.toml";
  // Weights (GPUs x requests): 4 x 8, 4 x 24, 4 x 16: run 1 is the longest, then 2, then 0.
  std::ofstream(file) << "[study]\nkind = \"grid\"\nbase = \"" << k_data << "/small.toml\"\n"
                      << "[[axis]]\nkey = \"workload.num_requests\"\nvalues = [8, 24, 16]\n";
  const auto sweep = [&](const std::string& out, const std::string& jobs) {
    return cli({"sweep", file.string(), "--out", (dir / out).string(), "-j", jobs, "--progress", "none"});
  };
  const Cli one = sweep("one", "1");
  INFO(one.err);
  REQUIRE(one.code == 0);
  REQUIRE_THAT(one.out, Contains("CPU"));
  // One worker: the journal holds the runs in the order they ran.
  std::vector<std::int64_t> ran;
  double journal_cpu_s = 0.0;
  std::istringstream lines(slurp(dir / "one" / "journal" / "rank-0.jsonl"));
  for (std::string line; std::getline(lines, line);) {
    RunRecord r;
    REQUIRE(parse_record_line(line, r));
    ran.push_back(r.run);
    REQUIRE(r.cpu_s > 0.0);
    journal_cpu_s += r.cpu_s;
  }
  REQUIRE(ran == std::vector<std::int64_t>{1, 2, 0});
  // study.json: the sweep's CPU time, each run's in plan order, and their sum.
  const nlohmann::json j = nlohmann::json::parse(slurp(dir / "one" / "study.json"));
  const nlohmann::json& t = j.at("timings");
  REQUIRE(t.at("cpu_s").get<double>() > 0.0);
  REQUIRE(t.at("runs").size() == 3);
  double sum = 0.0;
  for (std::size_t i = 0; i < 3; ++i) {
    REQUIRE(t.at("runs")[i].at("run").get<std::int64_t>() == static_cast<std::int64_t>(i));
    REQUIRE(t.at("runs")[i].at("cpu_s").get<double>() > 0.0);
    sum += t.at("runs")[i].at("cpu_s").get<double>();
  }
  REQUIRE(t.at("run_cpu_s_total").get<double>() == sum);
  REQUIRE(sum == Approx(journal_cpu_s));
  // Two workers: the same bytes, timings aside.
  REQUIRE(sweep("two", "2").code == 0);
  REQUIRE(slurp(dir / "one" / "runs.csv") == slurp(dir / "two" / "runs.csv"));
  REQUIRE(slurp(dir / "one" / "points.csv") == slurp(dir / "two" / "points.csv"));
  nlohmann::json a = j;
  nlohmann::json b = nlohmann::json::parse(slurp(dir / "two" / "study.json"));
  a.erase("timings");
  b.erase("timings");
  REQUIRE(a == b);
  fs::remove_all(dir);
}

TEST_CASE("settings that have no effect are warned about, not ignored") {
  const std::string small = k_data + "/small.toml";
  const auto warnings = [&](const std::vector<std::string>& sets) { return load_config(small, sets).warnings; };
  REQUIRE(warnings({}).empty());
  // metro chooses among replicas: on linear placement without redundant slots it is "even".
  const auto metro = warnings({"policy.routing=metro"});
  REQUIRE(metro.size() == 1);
  REQUIRE_THAT(metro[0], Contains("routes exactly like \"even\""));
  REQUIRE(warnings({"policy.routing=metro", "policy.placement=eplb", "parallel.redundant_experts=4"}).empty());
  // Redundant slots under a one-copy placement stay empty.
  REQUIRE_THAT(warnings({"parallel.redundant_experts=4"}).at(0), Contains("stay empty"));
  // ... unless the periodic trigger re-solves EPLB over every slot later.
  REQUIRE(warnings({"parallel.redundant_experts=4", "policy.rebalance=periodic"}).empty());
  // The CLI prints them on stderr.
  const Cli v = cli({"validate", small, "--set", "policy.routing=grace"});
  REQUIRE(v.code == 0);
  REQUIRE_THAT(v.err, Contains("epsim: warning: "));
}

TEST_CASE("the example studies load and plan: every point a valid experiment") {
  const fs::path dir = fs::path(k_data) / ".." / ".." / "examples" / "studies";
  const auto plan = [&](const char* name) { return plan_study(load_study((dir / name).string())); };
  const StudyPlan whatif = plan("whatif-ep-sizes.toml");
  REQUIRE(whatif.points.size() == 4);
  REQUIRE(whatif.points[3].config.cluster.num_gpus() == 72);
  REQUIRE(whatif.points[3].config.workload.arrivals.rate_rps == 36.0);  // zipped with the setup
  const StudyPlan mc = plan("montecarlo-variability.toml");
  REQUIRE(mc.points.size() == 4);
  REQUIRE(mc.replications == 30);
  REQUIRE(mc.warnings.empty());
  const StudyPlan compare = plan("compare-policies.toml");
  REQUIRE(compare.points.size() == 49);  // 7 policies x 7 rates
  REQUIRE(compare.warnings.empty());
}

TEST_CASE("a what-if writes its scaling curves and, when asked, every run's own results") {
  const fs::path dir = fs::temp_directory_path() / "epsim-study-whatif";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path file = dir / "study.toml";
  std::ofstream(file) << "[study]\nkind = \"whatif\"\nbase = \"" << k_data << "/small.toml\"\nreplications = 2\n"
                      << "save_runs = true\nreport = [\"gpus\", \"slo.goodput_rps\"]\n"
                      << "[[axis]]\nname = \"setup\"\nlevels = [\n"
                      << "  { label = \"EP4\", set = { parallel.ep_size = 4 } },\n"
                      << "  { label = \"EP2\", set = { cluster.nodes = 1, cluster.speed_factors = [1.0, 0.9], "
                         "parallel.ep_size = 2 } },\n]\n";
  const Cli r = cli({"sweep", file.string(), "--out", (dir / "out").string(), "--progress", "none"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const std::string scaling = slurp(dir / "out" / "scaling.csv");
  // Ordered by GPUs: the 2-GPU setup (point 1) first.
  // gpus, a report metric here, is not repeated after the gpus column.
  // Both setups are one system family at one rate: one curve (scaling_series.hpp).
  REQUIRE_THAT(scaling,
               Catch::StartsWith("point,setup,system,series,gpus,ep_size,slo.goodput_rps,slo.goodput_rps.ci95_low,"
                                 "slo.goodput_rps.ci95_high\n1,EP2,\"HGX H100 nodes, rail-optimised NDR\",\"HGX H100 "
                                 "nodes, rail-optimised NDR, 4 req/s\",2,2,"));
  REQUIRE_THAT(scaling, Contains("\n0,EP4,\"HGX H100 nodes, rail-optimised NDR\",\"HGX H100 nodes, rail-optimised NDR, "
                                 "4 req/s\",4,4,"));
  for (const char* run : {"p0000-r000", "p0000-r001", "p0001-r000", "p0001-r001"}) {
    REQUIRE(fs::exists(dir / "out" / "runs" / run / "summary.json"));
    REQUIRE(fs::exists(dir / "out" / "runs" / run / "requests.csv"));
  }
  fs::remove_all(dir);
}

TEST_CASE("a running simulation reports its progress: simulated time, arrivals, finished requests") {
  const ExperimentConfig cfg = load_config(k_data + "/small.toml", {});
  serving::Simulator sim(build_simulation(cfg, profile_pool_windows(cfg)));
  std::vector<serving::RunProgress> seen;
  sim.set_progress([&](const serving::RunProgress& p) { seen.push_back(p); }, 100);
  const serving::SimulationResult res = sim.run();
  // Every 100 steps over all groups: the golden run has 912 steps.
  REQUIRE(seen.size() == static_cast<std::size_t>(res.summary.steps / 100));
  for (std::size_t i = 0; i < seen.size(); ++i) {
    REQUIRE(seen[i].requests_finished <= seen[i].requests_arrived);
    REQUIRE(seen[i].requests_arrived <= 40);
    if (i > 0) {
      REQUIRE(seen[i].now_ns > seen[i - 1].now_ns);
      REQUIRE(seen[i].requests_finished >= seen[i - 1].requests_finished);
    }
  }
  REQUIRE(seen.back().requests_finished > 0);
}

TEST_CASE("a damaged journal line is skipped with a warning, a torn last line set aside: the resume goes on") {
  const fs::path dir = fs::temp_directory_path() / "epsim-journal-damage";
  fs::remove_all(dir);
  fs::create_directories(dir / "journal");
  RunRecord a;
  a.key = "aaaa";
  a.metrics = {{"x", 1.5}};
  RunRecord b = a;
  b.key = "bbbb";
  // A record whose field has the wrong type (it threw out of the whole resume), one nested deeper than
  // any record, a line that is not JSON, and a torn last line without its newline.
  std::ofstream(dir / "journal" / "rank-0.jsonl", std::ios::binary)
      << record_line(a) << "{\"key\":\"cccc\",\"metrics\":[],\"run\":\"seven\"}\n"
      << "{\"key\":\"dddd\",\"metrics\":[" << std::string(100000, '[') << "]}\n"
      << "not json\n"
      << record_line(b) << "{\"key\":\"ee";
  std::vector<std::string> warnings;
  const auto loaded = Journal::load(dir, &warnings);
  REQUIRE(loaded.size() == 2);
  REQUIRE(loaded.count("aaaa") == 1);
  REQUIRE(loaded.count("bbbb") == 1);
  REQUIRE(loaded.at("aaaa").metrics.at(0).second == 1.5);
  REQUIRE(warnings.size() == 1);
  // Lines 2, 3, 4 and the torn 6th are not records; the first of them is line 2.
  REQUIRE_THAT(warnings[0], Contains("rank-0.jsonl: 4 line(s) are not run records (the first: line 2)"));
  // The writer reopening its journal sets the torn line aside and appends on a fresh line.
  RunRecord c = a;
  c.key = "ffff";
  {
    Journal j(dir, "rank-0");
    j.append(c);
  }
  REQUIRE(slurp(dir / "journal" / "rank-0.jsonl.torn") == "{\"key\":\"ee\n");
  const std::string text = slurp(dir / "journal" / "rank-0.jsonl");
  REQUIRE_THAT(text, Catch::EndsWith(record_line(b) + record_line(c)));
  warnings.clear();
  const auto again = Journal::load(dir, &warnings);
  REQUIRE(again.size() == 3);
  REQUIRE_THAT(warnings.at(0), Contains("3 line(s) are not run records (the first: line 2)"));
  fs::remove_all(dir);
}

TEST_CASE("saved runs follow the current study: an edited study never shows a run under another point", "[slow]") {
  const fs::path dir = fs::temp_directory_path() / "epsim-study-saved-runs";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto write_study = [&](const std::string& values) {
    std::ofstream(dir / "study.toml") << "[study]\nkind = \"grid\"\nbase = \"" << k_data << "/small.toml\"\n"
                                      << "save_runs = true\n[[axis]]\nkey = \"workload.rate_rps\"\nvalues = [" << values
                                      << "]\n";
  };
  const auto sweep = [&](const std::string& out) {
    return cli({"sweep", (dir / "study.toml").string(), "--out", (dir / out).string(), "--progress", "none"});
  };
  write_study("2.0, 8.0");
  const Cli first = sweep("out");
  INFO(first.err);
  REQUIRE(first.code == 0);
  const std::string rate2 = slurp(dir / "out" / "runs" / "p0000-r000" / "summary.json");
  const std::string rate8 = slurp(dir / "out" / "runs" / "p0001-r000" / "summary.json");
  REQUIRE(rate2 != rate8);
  // The same runs in the other order, and one of them dropped: both come from the journal, and the
  // saved runs are numbered as the study now is.
  write_study("8.0");
  const Cli edited = sweep("out");
  REQUIRE(edited.code == 0);
  REQUIRE_THAT(edited.err, Contains("1 from the journal, 0 to run"));
  REQUIRE(slurp(dir / "out" / "runs" / "p0000-r000" / "summary.json") == rate8);
  REQUIRE_FALSE(fs::exists(dir / "out" / "runs" / "p0001-r000"));
  write_study("8.0, 2.0");
  REQUIRE(sweep("out").code == 0);
  REQUIRE(slurp(dir / "out" / "runs" / "p0000-r000" / "summary.json") == rate8);
  REQUIRE(slurp(dir / "out" / "runs" / "p0001-r000" / "summary.json") == rate2);
  // A study that did not save its runs before runs them again when it starts to.
  std::ofstream(dir / "nosave.toml") << "[study]\nkind = \"grid\"\nbase = \"" << k_data << "/small.toml\"\n"
                                     << "[[axis]]\nkey = \"workload.rate_rps\"\nvalues = [2.0]\n";
  REQUIRE(cli({"sweep", (dir / "nosave.toml").string(), "--out", (dir / "b").string(), "--progress", "none"}).code ==
          0);
  REQUIRE_FALSE(fs::exists(dir / "b" / "runs"));
  write_study("2.0");
  const Cli now_saved = sweep("b");
  REQUIRE_THAT(now_saved.err, Contains("0 from the journal, 1 to run"));
  REQUIRE(slurp(dir / "b" / "runs" / "p0000-r000" / "summary.json") == rate2);
  fs::remove_all(dir);
}

TEST_CASE("a sweep into a directory another sweep holds fails at once, naming it, and only dead temporaries go") {
  const fs::path dir = fs::temp_directory_path() / "epsim-study-lock";
  fs::remove_all(dir);
  fs::create_directories(dir / "out" / "user");
  std::ofstream(dir / "study.toml") << "[study]\nkind = \"grid\"\nbase = \"" << k_data << "/small.toml\"\n"
                                    << "[[axis]]\nkey = \"workload.rate_rps\"\nvalues = [2.0]\n";
  const auto sweep = [&] {
    return cli({"sweep", (dir / "study.toml").string(), "--out", (dir / "out").string(), "--progress", "none"});
  };
  {
    // Held as a running sweep holds it (flock locks of two opens conflict, even in one process).
    const epsim::core::DirectoryLock other(dir / "out", ".epsim-sweep.lock", "epsim sweep");
    const Cli r = sweep();
    REQUIRE(r.code == 1);
    REQUIRE_THAT(r.err, Contains("in use by another epsim sweep (PID " + std::to_string(::getpid()) + ")"));
    REQUIRE_FALSE(fs::exists(dir / "out" / "runs.csv"));
    REQUIRE_FALSE(fs::exists(dir / "out" / "journal"));
  }
  // A running writer's temporary file (this process's PID) and a user's file below --out stay; a dead
  // writer's goes.
  const std::string alive = "runs.csv.tmp-" + std::to_string(::getpid());
  std::ofstream(dir / "out" / alive) << "in flight";
  std::ofstream(dir / "out" / "user" / "data.tmp-2147483547") << "the user's";
  std::ofstream(dir / "out" / "points.csv.tmp-2147483547") << "a killed sweep's";
  const Cli r = sweep();
  INFO(r.err);
  REQUIRE(r.code == 0);
  REQUIRE(fs::exists(dir / "out" / alive));
  REQUIRE(fs::exists(dir / "out" / "user" / "data.tmp-2147483547"));
  REQUIRE_FALSE(fs::exists(dir / "out" / "points.csv.tmp-2147483547"));
  REQUIRE(rows_starting(slurp(dir / "out" / "runs.csv"), "").size() == 2);
  fs::remove_all(dir);
}
