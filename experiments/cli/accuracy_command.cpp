// SPDX-License-Identifier: Apache-2.0
#include "experiments/cli/accuracy_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <boost/program_options.hpp>
#include <exception>
#include <mutex>
#include <thread>

#include "core/atomic_file.hpp"
#include "core/signal_cleanup.hpp"
#include "core/staged_directory.hpp"
#include "experiments/cli/accuracy_figures.hpp"
#include "experiments/cli/accuracy_report.hpp"
#include "experiments/cli/accuracy_suite.hpp"
#include "experiments/cli/command_line.hpp"

namespace po = boost::program_options;

namespace epsim::experiments {
namespace {

constexpr std::array<std::string_view, 2> k_outputs{"accuracy.csv", "accuracy.md"};

// The points' figures, each point priced on one of `jobs` threads; results keep the suite's order, so
// the output is the same at any -j. The first failing point (in suite order) is the error.
std::vector<FigureResult> price_points(const std::vector<PointSpec>& points, const SuiteFiles& files, int jobs) {
  std::vector<std::vector<FigureResult>> per_point(points.size());
  std::vector<std::exception_ptr> failures(points.size());
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < points.size(); i = next++) {
      try {
        per_point[i] = price_point(points[i], files);
      } catch (...) {
        failures[i] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> threads;
  const auto n = static_cast<std::size_t>(std::min<std::size_t>(static_cast<std::size_t>(jobs), points.size()));
  threads.reserve(n);
  for (std::size_t t = 0; t < n; ++t) {
    threads.emplace_back(worker);
  }
  for (std::thread& t : threads) {
    t.join();
  }
  for (const std::exception_ptr& f : failures) {
    if (f) {
      std::rethrow_exception(f);
    }
  }
  std::vector<FigureResult> out;
  for (std::vector<FigureResult>& p : per_point) {
    out.insert(out.end(), std::make_move_iterator(p.begin()), std::make_move_iterator(p.end()));
  }
  return out;
}

}  // namespace

int accuracy_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description d = common_options();
  d.add_options()("suite", po::value<std::string>(), "suite folder or one point file (default: the embedded suite)")(
      "out", po::value<std::string>(), "write DIR/accuracy.csv and DIR/accuracy.md")(
      "jobs,j", po::value<std::string>()->default_value("1"), "points priced at once")(
      "quick", "only the quick points (those CI pins)")("point", po::value<std::vector<std::string>>()->composing(),
                                                        "only this point (file stem; repeatable)")(
      "csv", "print accuracy.csv instead of the table");
  po::positional_options_description pos;
  pos.add("suite", 1);
  const po::variables_map vm = parse_options(args, d, pos);
  if (vm.count("help")) {
    out << "usage: epsim accuracy [SUITE] [--out DIR] [-j N] [--quick] [--point NAME]... [--csv]\n\n"
           "Prices every point of an accuracy suite (published measurements of deployments, kernels and\n"
           "collectives with the epsim setup that reproduces each; accuracy/README.md) and prints published\n"
           "against predicted, with the error in and out of sample apart.\n\n"
        << d;
    return 0;
  }
  const int jobs = static_cast<int>(whole_number_option(vm["jobs"].as<std::string>(), "--jobs", 1, 1024));
  const SuiteFiles files =
      vm.count("suite") ? SuiteFiles::on_disk(vm["suite"].as<std::string>()) : SuiteFiles::embedded();
  std::optional<core::StagedDirectory> staged;
  if (vm.count("out")) {
    staged.emplace(vm["out"].as<std::string>(), k_outputs);  // a bad --out fails before the work
  }
  std::vector<PointSpec> points = read_suite(files);
  std::vector<std::string> wanted;
  if (vm.count("point")) {
    wanted = vm["point"].as<std::vector<std::string>>();
    for (const std::string& w : wanted) {
      if (std::none_of(points.begin(), points.end(), [&](const PointSpec& p) { return p.name == w; })) {
        throw std::invalid_argument(fmt::format("--point: no point \"{}\" in {}", w, files.label()));
      }
    }
  }
  const bool quick = vm.count("quick") > 0;
  std::erase_if(points, [&](const PointSpec& p) {
    return (quick && !p.quick) || (!wanted.empty() && std::find(wanted.begin(), wanted.end(), p.name) == wanted.end());
  });
  if (points.empty()) {
    throw std::invalid_argument(fmt::format("{} has no quick point", files.label()));
  }
  const std::vector<FigureResult> results = price_points(points, files, jobs);
  out << (vm.count("csv") ? accuracy_csv(results) : accuracy_table(results));
  if (staged) {
    const core::SignalBlock block;
    core::write_file_atomically(staged->path() / "accuracy.csv", accuracy_csv(results));
    core::write_file_atomically(staged->path() / "accuracy.md", accuracy_markdown(points, results));
    staged->commit();
    err << fmt::format("epsim accuracy: {} figures of {} points; results in {}\n", results.size(), points.size(),
                       staged->target().string());
  }
  return 0;
}

}  // namespace epsim::experiments
