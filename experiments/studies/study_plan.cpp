// SPDX-License-Identifier: Apache-2.0
#include "experiments/studies/study_plan.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"
#include "core/random_streams.hpp"
#include "experiments/assembly/run_metrics.hpp"
#include "experiments/studies/slo_search.hpp"
#include "policies/policy_bundles.hpp"
#include "version.hpp"

namespace epsim::experiments {
namespace {

// The level index of every axis for point `p`: the product over the axes without zip_with (the last
// fastest), zipped axes taking their partner's index.
std::vector<std::vector<std::size_t>> enumerate_levels(const StudySpec& spec) {
  std::vector<std::size_t> primary;
  for (std::size_t a = 0; a < spec.axes.size(); ++a) {
    if (spec.axes[a].zip_with.empty()) {
      primary.push_back(a);
    }
  }
  std::size_t count = 1;
  for (const std::size_t a : primary) {
    count *= spec.axes[a].levels.size();
  }
  std::vector<std::vector<std::size_t>> out(count, std::vector<std::size_t>(spec.axes.size(), 0));
  for (std::size_t p = 0; p < count; ++p) {
    std::size_t rest = p;
    for (std::size_t i = primary.size(); i-- > 0;) {
      const std::size_t n = spec.axes[primary[i]].levels.size();
      out[p][primary[i]] = rest % n;
      rest /= n;
    }
    for (std::size_t a = 0; a < spec.axes.size(); ++a) {
      if (!spec.axes[a].zip_with.empty()) {
        const auto with = std::find_if(spec.axes.begin(), spec.axes.end(),
                                       [&](const StudyAxis& o) { return o.name == spec.axes[a].zip_with; });
        out[p][a] = out[p][static_cast<std::size_t>(with - spec.axes.begin())];
      }
    }
  }
  return out;
}

// A name of the objective that is neither an axis nor a metric every run reports, but a key of the
// point's configuration ("workload.rate_rps" when the rate is no axis): no run would report it, so
// every point would be infeasible. Metrics that only some runs report (a policy's own figures) pass.
void check_objective_metrics(const StudySpec& spec, const StudyPlan& plan) {
  if (!spec.objective || plan.points.empty()) {
    return;
  }
  std::vector<std::string> names{spec.objective->metric};
  for (const ObjectiveConstraint& c : spec.objective->subject_to) {
    names.push_back(c.metric);
  }
  const ExperimentConfig& cfg = plan.points.front().config;
  const NamedValues metrics = run_metrics(cfg, serving::SimulationResult{});
  for (const std::string& name : names) {
    const bool axis =
        std::any_of(spec.axes.begin(), spec.axes.end(), [&](const StudyAxis& a) { return a.name == name; });
    const bool metric = std::any_of(metrics.begin(), metrics.end(), [&](const auto& m) { return m.first == name; });
    if (!axis && !metric && spec.base.at_path(name)) {
      throw core::ConfigError(spec.source, "study.objective",
                              fmt::format("\"{}\" is a config key, not a metric of the runs: to constrain or rank by "
                                          "it, make it an axis ([[axis]] key = \"{}\", values = [...])",
                                          name, name));
    }
  }
}

}  // namespace

StudyPlan plan_study(const StudySpec& spec) {
  StudyPlan plan;
  plan.replications = spec.replications;
  if (spec.max_rate) {
    // The same threshold `epsim slo` warns at (slo_search.hpp decides it).
    const std::string w = slo_window_warning(*spec.max_rate, spec.source + ": study.max_rate");
    if (!w.empty()) {
      plan.warnings.push_back(w);
    }
  }
  const auto levels = enumerate_levels(spec);
  for (std::size_t p = 0; p < levels.size(); ++p) {
    StudyPoint point;
    point.index = static_cast<int>(p);
    point.level = levels[p];
    toml::table overrides;
    std::string bundle;
    std::vector<std::string> described;
    for (std::size_t a = 0; a < spec.axes.size(); ++a) {
      const AxisLevel& level = spec.axes[a].levels[levels[p][a]];
      point.labels.push_back(level.label);
      described.push_back(fmt::format("{}={}", spec.axes[a].name, level.label));
      core::merge_tables(overrides, level.overrides);
      if (!level.policy_bundle.empty()) {
        if (!bundle.empty()) {
          throw core::ConfigError(
              spec.source, spec.axes[a].name,
              fmt::format("two axes give a policy bundle to one point ({} and {})", bundle, level.policy_bundle));
        }
        bundle = level.policy_bundle;
      }
    }
    const std::string name =
        fmt::format("{} point {} ({})", spec.source, p,
                    described.empty() ? "the base" : fmt::format("{}", fmt::join(described, ", ")));
    // A policy bundle lies under the point's explicit overrides; its redundant slots follow the
    // point's EP size, so the point is loaded once without it to learn that size.
    toml::table base = spec.base;
    if (!bundle.empty()) {
      const ExperimentConfig plain = load_config_tables(spec.base, spec.base_source, overrides, name);
      core::merge_tables(base, policies::policy_bundle(bundle).overrides(policies::BundleContext{
                                   plain.ep_size(), static_cast<int>(plain.model.routed_experts)}));
    }
    point.config = load_config_tables(std::move(base), spec.base_source, overrides, name);
    point.config.source = name;
    const hardware::VariabilityConfig& v = point.config.variability;
    if (spec.vary.cluster && !spec.vary.workload && !spec.vary.policy && spec.replications > 1 &&
        (v.kind == hardware::VariabilityConfig::Kind::none ||
         v.kind == hardware::VariabilityConfig::Kind::explicit_list) &&
        v.drift.stddev == 0.0 && v.jitter.cv == 0.0) {
      point.config.warnings.push_back(
          fmt::format("{}: replications vary only the cluster draws, but its GPU speeds are fixed (no statistical "
                      "[cluster.variability], drift or jitter): every replication is the same run",
                      spec.source));
    }
    for (const std::string& w : point.config.warnings) {
      if (std::find(plan.warnings.begin(), plan.warnings.end(), w) == plan.warnings.end()) {
        plan.warnings.push_back(w);
      }
    }
    plan.points.push_back(std::move(point));
  }
  check_objective_metrics(spec, plan);
  return plan;
}

ExperimentConfig run_config(const StudySpec& spec, const StudyPlan& plan, const StudyRunSpec& run) {
  const StudyPoint& point = plan.points[static_cast<std::size_t>(run.point)];
  const std::int64_t r = spec.common_random_numbers ? run.replication : run.index;
  return with_replication(point.config, r, spec.vary);
}

std::string run_key(const StudySpec& spec, const ExperimentConfig& cfg) {
  std::string text = fmt::format("epsim {}\nseeds {} {} {}\n", k_version, cfg.seed, cfg.seed_of(SeedFamily::workload),
                                 cfg.seed_of(SeedFamily::cluster));
  if (spec.max_rate) {
    const SloSearchOptions& o = *spec.max_rate;
    text += fmt::format("max_rate {} {} {} {} {} {} {} [{}] confirm {}\n", o.target, o.tolerance, o.max_probes,
                        o.measured_requests, o.duration_s, o.warmup_fraction, o.cooldown_fraction,
                        fmt::join(o.rates, ","), k_slo_confirm_multiple);
  }
  text += cfg.echo_json;
  return fmt::format("{:016x}", core::mix64(core::stable_hash(text)));
}

}  // namespace epsim::experiments
