#include "experiments/sweep_command.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <chrono>
#include <filesystem>
#include <map>
#include <sstream>
#include <thread>

#include "experiments/mpi_world.hpp"
#include "experiments/study_journal.hpp"
#include "experiments/study_plan.hpp"
#include "experiments/study_report.hpp"
#include "experiments/study_runner.hpp"
#include "experiments/study_spec.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/error.hpp"

namespace po = boost::program_options;

namespace epsim::experiments {
namespace {

// Temporary files a killed sweep may have left (the atomic writer's "<name>.tmp-<pid>").
void remove_stray_temporaries(const std::filesystem::path& dir) {
  if (!std::filesystem::is_directory(dir)) {
    return;
  }
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    const std::size_t at = name.rfind(".tmp-");
    if (e.is_regular_file() && at != std::string::npos &&
        name.find_first_not_of("0123456789", at + 5) == std::string::npos && at + 5 < name.size()) {
      std::filesystem::remove(e.path());
    }
  }
}

struct Outputs {
  std::vector<std::pair<std::string, std::string>> files;  // name, content
};

}  // namespace

int sweep_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description d("options");
  d.add_options()("help,h", "show this help")("study", po::value<std::string>(), "the study file (TOML)")(
      "out", po::value<std::string>(), "output directory (default: results/<study name>)")(
      "jobs,j", po::value<int>()->default_value(1), "runs at once on this machine (per MPI rank under mpirun)")(
      "fresh", "forget the journal of earlier invocations and run everything again")(
      "progress", po::value<std::string>()->default_value("auto"),
      "auto (a bar on a terminal, plain lines otherwise), bar, plain, none");
  po::positional_options_description pos;
  pos.add("study", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(d).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw std::invalid_argument(e.what());
  }
  if (vm.count("help")) {
    out << "usage: epsim sweep STUDY.toml [--out DIR] [-j N] [--fresh] [--progress auto|bar|plain|none]\n"
           "       mpirun -n N epsim sweep STUDY.toml ...   (ranks share the runs; rank 0 writes the outputs)\n\n"
        << d;
    return 0;
  }
  if (!vm.count("study")) {
    throw std::invalid_argument("sweep needs a STUDY file (docs/studies.md)");
  }
  const int jobs = vm["jobs"].as<int>();
  const std::string progress = vm["progress"].as<std::string>();
  if (jobs < 1 || jobs > 1024) {
    throw std::invalid_argument("--jobs must be in [1, 1024]");
  }
  if (progress != "auto" && progress != "bar" && progress != "plain" && progress != "none") {
    throw std::invalid_argument("--progress must be auto, bar, plain or none");
  }
  const auto t0 = std::chrono::steady_clock::now();
  const MpiWorld world;
  const bool root = world.rank() == 0;

  // Everything is planned and validated on every rank before any run starts: a bad study fails at
  // once, the same way everywhere.
  const StudySpec spec = load_study(vm["study"].as<std::string>());
  const StudyPlan plan = plan_study(spec);
  const std::filesystem::path dir = vm.count("out") ? vm["out"].as<std::string>() : "results/" + spec.name;
  if (root) {
    for (const std::string& w : plan.warnings) {
      err << "epsim: warning: " << w << "\n";
    }
    std::filesystem::create_directories(dir);
    remove_stray_temporaries(dir);
    if (vm.count("fresh")) {
      std::filesystem::remove_all(dir / "journal");
    }
  }
  (void)world.all(true);  // the cleanup is done before any rank reads the journal or writes

  const std::map<std::string, RunRecord> done = Journal::load(dir);
  std::vector<std::string> keys;
  std::vector<std::int64_t> pending;
  for (std::int64_t i = 0; i < plan.runs(); ++i) {
    keys.push_back(run_key(spec, run_config(spec, plan, plan.run(i))));
    if (!done.count(keys.back())) {
      pending.push_back(i);
    }
  }
  std::vector<std::int64_t> mine;
  for (std::size_t i = static_cast<std::size_t>(world.rank()); i < pending.size();
       i += static_cast<std::size_t>(world.size())) {
    mine.push_back(pending[i]);
  }
  if (root) {
    err << fmt::format("epsim sweep: {} points x {} replications = {} runs; {} from the journal, {} to run{}\n",
                       plan.points.size(), plan.replications, plan.runs(),
                       plan.runs() - static_cast<std::int64_t>(pending.size()), pending.size(),
                       world.size() > 1 ? fmt::format(" over {} ranks x {} jobs", world.size(), jobs)
                                        : fmt::format(" on {} jobs", jobs));
  }
  Journal journal(dir, fmt::format("rank-{}", world.rank()));
  RunnerOptions o;
  o.jobs = jobs;
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  o.progress = root && progress != "none" ? &err : nullptr;
  o.terminal = progress == "bar" || (progress == "auto" && tty);
  const std::vector<RunRecord> ran = execute_runs(spec, plan, mine, dir, journal, o);

  // Rank 0 gathers what every rank ran (successes and errors) and joins it with the journal's.
  std::string lines;
  for (const RunRecord& r : ran) {
    RunRecord copy = r;
    if (copy.key.empty()) {
      copy.key = "error";
    }
    lines += record_line(copy);
  }
  const std::vector<std::string> gathered = world.gather(lines);
  if (!root) {
    return 0;
  }
  std::map<std::string, RunRecord> by_key = done;
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
    std::string what = fmt::format("{} run(s) failed; the {} finished ones are in the journal. First: {}",
                                   errors.size(), by_key.size(), errors.front());
    throw core::Error(what);
  }
  StudyRecords records;
  std::int64_t loops = 0;
  for (std::int64_t i = 0; i < plan.runs(); ++i) {
    const auto it = by_key.find(keys[static_cast<std::size_t>(i)]);
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
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
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
  files.emplace_back("study.json",
                     study_json(spec, plan, records, wall_s, plan.runs() - static_cast<std::int64_t>(pending.size())));
  for (const auto& [name, content] : files) {
    core::write_file_atomically(dir / name, content);
  }
  out << study_table(spec, plan, records);
  std::vector<std::string> names;
  names.reserve(files.size());
  for (const auto& f : files) {
    names.push_back(f.first);
  }
  out << fmt::format("wall time {:.1f} s; {} in {}\n", wall_s, fmt::join(names, ", "), dir.string());
  return 0;
}

}  // namespace epsim::experiments
