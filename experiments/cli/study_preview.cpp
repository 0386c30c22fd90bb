// SPDX-License-Identifier: Apache-2.0
#include "experiments/cli/study_preview.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>

#include "core/csv_lines.hpp"
#include "core/duration_text.hpp"
#include "core/error.hpp"
#include "experiments/assembly/build_simulation.hpp"
#include "experiments/assembly/load_window.hpp"
#include "experiments/cli/command_line.hpp"
#include "experiments/studies/study_eta.hpp"

namespace epsim::experiments {

bool is_study_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return false;  // the config loader says it cannot be opened
  }
  return parse_config_text(core::read_whole_input(in, path), path).contains("study");
}

void validate_study(const std::string& path, std::ostream& out, std::ostream& err) {
  const StudySpec spec = load_study(path);
  const StudyPlan plan = plan_study(spec);  // every point's configuration, loaded and checked
  for (const std::string& w : plan.warnings) {
    warn(err, w);
  }
  // What building a run's simulation checks (placement, load window, memory plan, inputs), per point:
  // replications differ in seeds only.
  for (const StudyPoint& p : plan.points) {
    const serving::Simulator sim(build_simulation(p.config, profile_pool_windows(p.config)));
  }
  out << fmt::format("{}: ok (study, kind {}: {} points x {} replications = {} runs)\n", spec.source,
                     study_kind_name(spec.kind), plan.points.size(), plan.replications, plan.runs());
}

void print_dry_run(const StudySpec& spec, const StudyPlan& plan, int jobs, std::ostream& out) {
  out << fmt::format("{}: {} points x {} replications = {} runs\n", spec.source, plan.points.size(), plan.replications,
                     plan.runs());
  for (const StudyPoint& p : plan.points) {
    std::vector<std::string> labels;
    for (std::size_t a = 0; a < spec.axes.size(); ++a) {
      labels.push_back(fmt::format("{}={}", spec.axes[a].name, p.labels[a]));
    }
    out << fmt::format("  point {}: {}\n", p.index,
                       labels.empty() ? "the base" : fmt::format("{}", fmt::join(labels, ", ")));
  }
  if (plan.points.empty()) {
    return;
  }
  // The pilot: the cheapest point, its requests cut to a few, simulated once.
  std::vector<std::int64_t> runs(static_cast<std::size_t>(plan.runs()));
  for (std::size_t i = 0; i < runs.size(); ++i) {
    runs[i] = static_cast<std::int64_t>(i);
  }
  const std::vector<double> weights = run_cost_weights(spec, plan, runs);
  const auto cheapest = static_cast<std::size_t>(std::min_element(weights.begin(), weights.end()) - weights.begin());
  const StudyRunSpec pilot_run = plan.run(static_cast<std::int64_t>(cheapest));
  ExperimentConfig pilot = run_config(spec, plan, pilot_run);
  const double requests = run_cost_weight(StudySpec{}, pilot) / std::max(1, pilot.cluster.num_gpus());
  pilot.workload.num_requests = std::min<std::int64_t>(k_pilot_requests, static_cast<std::int64_t>(requests));
  pilot.workload.duration_s = 0.0;
  const auto t0 = std::chrono::steady_clock::now();
  serving::Simulator sim(build_simulation(pilot, profile_pool_windows(pilot)));
  (void)sim.run();
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double per_weight = wall_s / run_cost_weight(StudySpec{}, pilot);
  double total_s = 0.0;
  for (const double w : weights) {
    total_s += w * per_weight;
  }
  out << fmt::format(
      "estimated CPU time: {} ({} on {} jobs), from a pilot of point {} with {} requests that took {:.2f} s, scaled "
      "by each run's GPUs x requests{}\n",
      core::duration_text(total_s), core::duration_text(total_s / std::max(1, jobs)), std::max(1, jobs),
      pilot_run.point, pilot.workload.num_requests, wall_s,
      spec.max_rate ? " (+ max_probes x measured_requests for the max-rate search)" : "");
  out << "dry run: nothing was run or written\n";
}

}  // namespace epsim::experiments
