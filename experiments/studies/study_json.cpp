// SPDX-License-Identifier: Apache-2.0
#include "experiments/studies/study_json.hpp"

#include <nlohmann/json.hpp>
#include <sstream>

#include "core/confidence.hpp"
#include "version.hpp"

namespace epsim::experiments {
namespace {

nlohmann::ordered_json toml_to_json(const toml::table& t) {
  std::ostringstream s;
  s << toml::json_formatter{t};
  return nlohmann::ordered_json::parse(s.str());
}

}  // namespace

std::string study_json(const StudySpec& spec, const StudyPlan& plan, const StudyRecords& records,
                       const StudyTimings& timings) {
  nlohmann::ordered_json j;
  j["epsim_version"] = k_version;
  j["study"] = spec.source;
  j["kind"] = study_kind_name(spec.kind);
  j["base"] = spec.base_source;
  j["replications"] = spec.replications;
  // How points.csv, scaling.csv and max_rate.csv make their intervals, and whether they say much.
  j["intervals"] = {{"level", 0.95},
                    {"method", "student-t, within the metric's range"},
                    {"min_replications", core::k_min_interval_n},
                    {"small_n", spec.replications < core::k_min_interval_n}};
  nlohmann::ordered_json vary = nlohmann::ordered_json::array();
  for (const auto& [name, on] : {std::pair{"workload", spec.vary.workload}, std::pair{"cluster", spec.vary.cluster},
                                 std::pair{"policy", spec.vary.policy}}) {
    if (on) {
      vary.push_back(name);
    }
  }
  j["vary"] = vary;
  j["common_random_numbers"] = spec.common_random_numbers;
  j["baseline"] = spec.baseline ? nlohmann::ordered_json(spec.baseline->first + "=" + spec.baseline->second)
                                : nlohmann::ordered_json();
  j["rate_axis"] = spec.rate_axis;
  j["slo_target"] = spec.slo_target;
  j["report"] = spec.report;
  if (spec.max_rate) {
    const SloSearchOptions& o = *spec.max_rate;
    j["max_rate"] = {{"target", o.target},
                     {"tolerance", o.tolerance},
                     {"measured_requests", o.measured_requests},
                     {"duration_s", o.duration_s},
                     {"warmup_fraction", o.warmup_fraction},
                     {"cooldown_fraction", o.cooldown_fraction},
                     {"rates", o.rates},
                     {"confirm_multiple", k_slo_confirm_multiple}};
  }
  nlohmann::ordered_json axes = nlohmann::ordered_json::array();
  for (const StudyAxis& a : spec.axes) {
    nlohmann::ordered_json levels = nlohmann::ordered_json::array();
    for (const AxisLevel& l : a.levels) {
      nlohmann::ordered_json level{{"label", l.label}, {"set", toml_to_json(l.overrides)}};
      if (!l.policy_bundle.empty()) {
        level["policy_bundle"] = l.policy_bundle;
      }
      if (l.value) {
        level["value"] = *l.value;  // a labelled level's number (a rate axis's rate, for the report)
      }
      levels.push_back(level);
    }
    axes.push_back({{"name", a.name}, {"zip_with", a.zip_with}, {"levels", levels}});
  }
  j["axes"] = axes;
  nlohmann::ordered_json points = nlohmann::ordered_json::array();
  for (const StudyPoint& p : plan.points) {
    nlohmann::ordered_json labels;
    for (std::size_t a = 0; a < spec.axes.size(); ++a) {
      labels[spec.axes[a].name] = p.labels[a];
    }
    points.push_back({{"point", p.index},
                      {"labels", labels},
                      {"gpus", p.config.cluster.num_gpus()},
                      {"ep_size", p.config.ep_size()},
                      {"placement", p.config.policy.placement},
                      {"routing", p.config.policy.routing}});
  }
  j["points"] = points;
  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  double run_wall_s = 0.0;
  double run_cpu_s = 0.0;
  nlohmann::ordered_json run_times = nlohmann::ordered_json::array();
  for (std::int64_t i = 0; i < plan.runs(); ++i) {
    const ExperimentConfig cfg = run_config(spec, plan, plan.run(i));
    runs.push_back({{"run", i},
                    {"key", records[static_cast<std::size_t>(i)].key},
                    {"seed", cfg.seed},
                    {"workload_seed", cfg.seed_of(SeedFamily::workload)},
                    {"cluster_seed", cfg.seed_of(SeedFamily::cluster)}});
    const RunRecord& r = records[static_cast<std::size_t>(i)];
    run_wall_s += r.wall_s;
    run_cpu_s += r.cpu_s;
    run_times.push_back({{"run", i}, {"wall_s", r.wall_s}, {"cpu_s", r.cpu_s}});
  }
  j["runs"] = runs;
  // Times are kept apart from the runs above so that everything outside `timings` is deterministic.
  j["timings"] = {{"wall_s", timings.wall_s},           {"cpu_s", timings.cpu_s},
                  {"run_wall_s_total", run_wall_s},     {"run_cpu_s_total", run_cpu_s},
                  {"reused_runs", timings.reused_runs}, {"runs", run_times}};
  return j.dump(2) + "\n";
}

}  // namespace epsim::experiments
