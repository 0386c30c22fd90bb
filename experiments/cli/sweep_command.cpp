// SPDX-License-Identifier: Apache-2.0
#include "experiments/cli/sweep_command.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <boost/program_options.hpp>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string_view>

#include "core/atomic_file.hpp"
#include "core/carried_entries.hpp"
#include "core/cpu_clock.hpp"
#include "core/directory_lock.hpp"
#include "core/error.hpp"
#include "core/signal_cleanup.hpp"
#include "core/staged_directory.hpp"
#include "experiments/cli/command_line.hpp"
#include "experiments/cli/study_preview.hpp"
#include "experiments/studies/mpi_world.hpp"
#include "experiments/studies/rebalance_report.hpp"
#include "experiments/studies/study_journal.hpp"
#include "experiments/studies/study_json.hpp"
#include "experiments/studies/study_plan.hpp"
#include "experiments/studies/study_report.hpp"
#include "experiments/studies/study_runner.hpp"
#include "experiments/studies/study_spec.hpp"

namespace po = boost::program_options;

namespace epsim::experiments {
namespace {

// The command line.
struct SweepArgs {
  std::string study;
  std::string out;  // empty: results/<study name>
  int jobs = 1;
  bool fresh = false;
  std::string progress;
  bool dry_run = false;
};

// nullopt when it asked for --help (printed on `out`).
std::optional<SweepArgs> parse_sweep_args(const std::vector<std::string>& args, std::ostream& out) {
  po::options_description d("options");
  d.add_options()("help,h", "show this help")("study", po::value<std::string>(), "the study file (TOML)")(
      "out", po::value<std::string>(), "output directory (default: results/<study name>)")(
      "jobs,j", po::value<int>()->default_value(1), "runs at once on this machine (per MPI rank under mpirun)")(
      "fresh", "forget the journal of earlier invocations and run everything again")(
      "progress", po::value<std::string>()->default_value("auto"),
      "auto (a bar on a terminal, plain lines otherwise), bar, plain, none")(
      "dry-run", "print the points, the runs and their estimated CPU time (from one short pilot run); write nothing");
  po::positional_options_description pos;
  pos.add("study", 1);
  const po::variables_map vm = parse_command_line(args, d, pos);
  if (vm.count("help")) {
    out << "usage: epsim sweep STUDY.toml [--out DIR] [-j N] [--fresh] [--progress auto|bar|plain|none] [--dry-run]\n"
           "       mpirun -n N epsim sweep STUDY.toml ...   (ranks share the runs; rank 0 writes the outputs)\n\n"
        << d;
    return std::nullopt;
  }
  if (!vm.count("study")) {
    throw std::invalid_argument("sweep needs a STUDY file (docs/studies.md)");
  }
  SweepArgs a{vm["study"].as<std::string>(),
              vm.count("out") ? vm["out"].as<std::string>() : "",
              vm["jobs"].as<int>(),
              vm.count("fresh") > 0,
              vm["progress"].as<std::string>(),
              vm.count("dry-run") > 0};
  if (a.jobs < 1 || a.jobs > 1024) {
    throw std::invalid_argument("--jobs must be in [1, 1024]");
  }
  if (a.progress != "auto" && a.progress != "bar" && a.progress != "plain" && a.progress != "none") {
    throw std::invalid_argument("--progress must be auto, bar, plain or none");
  }
  return a;
}

// Every run's key (by run index), and the runs whose key the journal lacks.
struct Pending {
  std::vector<std::string> keys;
  std::vector<std::int64_t> runs;
};

Pending pending_runs(const StudySpec& spec, const StudyPlan& plan, const std::map<std::string, RunRecord>& done,
                     const std::filesystem::path& dir) {
  Pending p;
  for (std::int64_t i = 0; i < plan.runs(); ++i) {
    p.keys.push_back(run_key(spec, run_config(spec, plan, plan.run(i))));
    // A study that saves its runs needs each run's results too, not only its journal record (the study
    // may have been run without save_runs before).
    const bool saved =
        !spec.save_runs || std::filesystem::is_regular_file(saved_run_dir(dir, p.keys.back()) / "summary.json");
    if (!done.count(p.keys.back()) || !saved) {
      p.runs.push_back(i);
    }
  }
  return p;
}

// Rank 0 gathers what every rank ran (successes and errors) and joins it with the journal's records;
// it throws when a run failed. Other ranks get an empty map.
std::map<std::string, RunRecord> gather_records(const MpiWorld& world, const std::vector<RunRecord>& ran,
                                                std::map<std::string, RunRecord> by_key) {
  std::string lines;
  for (const RunRecord& r : ran) {
    RunRecord copy = r;
    if (copy.key.empty()) {
      copy.key = "error";
    }
    lines += record_line(copy);
  }
  const std::vector<std::string> gathered = world.gather(lines);
  if (world.rank() != 0) {
    return {};
  }
  std::vector<std::string> errors;
  for (const std::string& text : gathered) {
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
      RunRecord r;
      if (!parse_record_line(line, r)) {
        continue;
      }
      if (!r.error.empty()) {
        errors.push_back(r.error);
      } else {
        by_key[r.key] = std::move(r);
      }
    }
  }
  if (!errors.empty()) {
    std::sort(errors.begin(), errors.end());
    throw core::Error(fmt::format("{} run(s) failed; the {} finished ones are in the journal. First: {}", errors.size(),
                                  by_key.size(), errors.front()));
  }
  return by_key;
}

// Every name a study's set of results may have (its manifest says which it has), "runs" (the saved runs'
// folder) included.
constexpr std::array<std::string_view, 10> k_study_outputs{
    "runs.csv",    "points.csv",    "scaling.csv",    "distribution.csv", "max_rate.csv",
    "ranking.csv", "rebalance.csv", "break_even.csv", "study.json",       "runs"};

// The lock file a sweep holds in its directory while it runs.
constexpr const char* k_lock_name = ".epsim-sweep.lock";

// The saved runs of the current numbering, DIR/runs/pNNNN-rNNN, as hard links to the runs kept by key.
void link_saved_runs(const StudyPlan& plan, const std::vector<std::string>& keys, const std::filesystem::path& dir,
                     const std::filesystem::path& staging) {
  for (std::int64_t i = 0; i < plan.runs(); ++i) {
    const StudyRunSpec r = plan.run(i);
    const std::filesystem::path to = staging / "runs" / fmt::format("p{:04}-r{:03}", r.point, r.replication);
    std::filesystem::create_directories(to);
    core::carry_entries(saved_run_dir(dir, keys[static_cast<std::size_t>(i)]), to, {});
  }
}

// Every output file of the study's kind: name and content.
std::vector<std::pair<std::string, std::string>> output_files(const StudySpec& spec, const StudyPlan& plan,
                                                              const StudyRecords& records,
                                                              const StudyTimings& timings) {
  std::vector<std::pair<std::string, std::string>> files{
      {"runs.csv", runs_csv(spec, plan, records)},
      {"points.csv", points_csv(spec, plan, records)},
  };
  if (spec.kind == StudyKind::whatif) {
    files.emplace_back("scaling.csv", scaling_csv(spec, plan, records));
  }
  if (spec.kind == StudyKind::montecarlo) {
    files.emplace_back("distribution.csv", distribution_csv(spec, plan, records));
  }
  if (!spec.rate_axis.empty()) {
    files.emplace_back("max_rate.csv", max_rate_csv(spec, plan, records));
  }
  if (spec.objective) {
    files.emplace_back("ranking.csv", ranking_csv(spec, plan, records));
  }
  if (spec.rebalance) {
    files.emplace_back("rebalance.csv", rebalance_csv(spec, plan, records));
    files.emplace_back("break_even.csv", break_even_csv(spec, plan, records));
  }
  files.emplace_back("study.json", study_json(spec, plan, records, timings));
  return files;
}

// This rank's share of the pending runs. With max-rate waves, each point's replication 0 runs first
// (wave 0) and the point's other replications (wave 1) start their searches from its bracket, read
// from the journal once every rank's wave 0 is in it. Each wave is dealt over the ranks by index.
std::vector<RunRecord> run_pending(const StudySpec& spec, const StudyPlan& plan, const Pending& pending,
                                   const MpiWorld& world, const std::filesystem::path& dir, Journal& journal,
                                   const RunnerOptions& o) {
  const bool waves = max_rate_waves(spec, plan);
  const auto mine_in = [&](int wave) {
    std::vector<std::int64_t> mine;
    std::size_t n = 0;
    for (const std::int64_t run : pending.runs) {
      const int of = waves && plan.run(run).replication > 0 ? 1 : 0;
      if (of == wave && n++ % static_cast<std::size_t>(world.size()) == static_cast<std::size_t>(world.rank())) {
        mine.push_back(run);
      }
    }
    return mine;
  };
  std::vector<RunRecord> ran = execute_runs(spec, plan, mine_in(0), dir, journal, o);
  if (!waves) {
    return ran;
  }
  (void)world.all(true);  // every rank's wave 0 is in the journal before any rank reads it
  const std::map<std::string, RunRecord> firsts = Journal::load(dir);
  const std::vector<std::int64_t> mine = mine_in(1);
  std::vector<std::optional<SloPrior>> priors;
  priors.reserve(mine.size());
  for (const std::int64_t run : mine) {
    priors.push_back(max_rate_prior(spec, plan, run, pending.keys, firsts));
  }
  std::vector<RunRecord> more = execute_runs(spec, plan, mine, dir, journal, o, priors);
  ran.insert(ran.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  return ran;
}

}  // namespace

int sweep_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const std::optional<SweepArgs> parsed = parse_sweep_args(args, out);
  if (!parsed) {
    return 0;
  }
  const SweepArgs& a = *parsed;
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0_s = core::process_cpu_s();
  const MpiWorld world;
  const bool root = world.rank() == 0;

  // Everything is planned and validated on every rank before any run starts: a bad study fails at
  // once, the same way everywhere.
  const StudySpec spec = load_study(a.study);
  const StudyPlan plan = plan_study(spec);
  if (a.dry_run) {
    if (root) {
      for (const std::string& w : plan.warnings) {
        warn(err, w);
      }
      print_dry_run(spec, plan, a.jobs, out);
    }
    return 0;
  }
  const std::filesystem::path dir = a.out.empty() ? "results/" + spec.name : a.out;
  // Rank 0 owns the results: the set is written beside the directory and swapped in whole at the end,
  // carrying over the journal and whatever else is not a result (core/staged_directory.hpp). Made now, it
  // checks --out before any run.
  std::unique_ptr<core::StagedDirectory> staged;
  std::unique_ptr<core::DirectoryLock> lock;
  std::vector<std::string> journal_warnings;
  if (root) {
    staged =
        std::make_unique<core::StagedDirectory>(dir, k_study_outputs, core::StagedDirectory::Existing::carry_foreign);
    std::filesystem::create_directories(dir);
    lock = std::make_unique<core::DirectoryLock>(dir, k_lock_name,
                                                 "epsim sweep");  // a second sweep into the same --out stops here
    for (const std::string& w : plan.warnings) {
      warn(err, w);
    }
    // Only what a killed sweep of this directory left: its own temporary files, never below.
    core::remove_dead_temporaries(dir);
    core::remove_dead_temporaries(dir / "journal");
    core::remove_dead_staging(saved_runs_dir(dir));
    if (a.fresh) {
      std::filesystem::remove_all(dir / "journal");
    }
  }
  (void)world.all(true);  // the cleanup is done before any rank reads the journal or writes

  const std::map<std::string, RunRecord> done = Journal::load(dir, root ? &journal_warnings : nullptr);
  for (const std::string& w : journal_warnings) {
    err << "epsim: warning: " << w << "\n";
  }
  const Pending pending = pending_runs(spec, plan, done, dir);
  const auto reused = plan.runs() - static_cast<std::int64_t>(pending.runs.size());
  if (root) {
    err << fmt::format("epsim sweep: {} points x {} replications = {} runs; {} from the journal, {} to run{}\n",
                       plan.points.size(), plan.replications, plan.runs(), reused, pending.runs.size(),
                       world.size() > 1 ? fmt::format(" over {} ranks x {} jobs", world.size(), a.jobs)
                                        : fmt::format(" on {} jobs", a.jobs));
  }
  Journal journal(dir, fmt::format("rank-{}", world.rank()));
  RunnerOptions o;
  o.jobs = a.jobs;
  o.progress = root && a.progress != "none" ? &err : nullptr;
  o.terminal = a.progress == "bar" || (a.progress == "auto" && ::isatty(STDERR_FILENO) != 0);
  const std::map<std::string, RunRecord> by_key =
      gather_records(world, run_pending(spec, plan, pending, world, dir, journal, o), done);
  if (!root) {
    return 0;
  }

  StudyRecords records;
  std::int64_t loops = 0;
  for (std::int64_t i = 0; i < plan.runs(); ++i) {
    const auto it = by_key.find(pending.keys[static_cast<std::size_t>(i)]);
    if (it == by_key.end()) {
      throw core::Error(fmt::format("run {} has no record (was the journal changed during the sweep?)", i));
    }
    records.push_back(it->second);
    records.back().run = i;
    loops += records.back().routing_loops > 0 ? 1 : 0;
  }
  if (loops > 0) {
    err << fmt::format(
        "epsim: warning: {} run(s) looped their routing trace: they outlast it, so its routing repeats\n", loops);
  }
  StudyTimings timings;
  timings.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  timings.cpu_s = core::process_cpu_s() - cpu0_s;
  timings.reused_runs = reused;
  const auto files = output_files(spec, plan, records, timings);
  // As a set: never a new runs.csv beside an old study.json, nor a stale ranking.csv or saved run. SIGINT /
  // SIGTERM wait until the set is in place (SIGKILL leaves the old set and a staging directory that the
  // next sweep removes).
  const core::SignalBlock block;
  for (const auto& [name, content] : files) {
    core::write_file_atomically(staged->path() / name, content);
  }
  if (spec.save_runs) {
    link_saved_runs(plan, pending.keys, dir, staged->path());
  }
  staged->commit();
  std::vector<std::string> names;
  names.reserve(files.size());
  for (const auto& [name, content] : files) {
    names.push_back(name);
  }
  out << study_table(spec, plan, records) << break_even_lines(spec, plan, records);
  out << fmt::format("wall time {:.1f} s, CPU {:.1f} s; {} in {}\n", timings.wall_s, timings.cpu_s,
                     fmt::join(names, ", "), dir.string());
  return 0;
}

}  // namespace epsim::experiments
