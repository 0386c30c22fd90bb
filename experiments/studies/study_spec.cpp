// SPDX-License-Identifier: Apache-2.0
#include "experiments/studies/study_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/csv_lines.hpp"
#include "core/error.hpp"
#include "core/message_text.hpp"
#include "core/toml_guard.hpp"
#include "experiments/studies/study_reader.hpp"
#include "policies/policy_bundles.hpp"
#include "policies/rebalance_config.hpp"
#include "workloads/workload_bounds.hpp"

namespace epsim::experiments {
namespace {

constexpr std::array<std::pair<std::string_view, StudyKind>, 5> k_kinds{{{"grid", StudyKind::grid},
                                                                         {"whatif", StudyKind::whatif},
                                                                         {"montecarlo", StudyKind::montecarlo},
                                                                         {"compare", StudyKind::compare},
                                                                         {"rebalance", StudyKind::rebalance}}};

std::optional<SloSearchOptions> parse_max_rate(StudyReader& rd, const toml::table& study) {
  const toml::node* n = study.get("max_rate");
  if (!n) {
    return std::nullopt;
  }
  const toml::table* t = n->as_table();
  if (!t) {
    rd.fail("study.max_rate", "expected a table (target, tolerance, measured_requests, duration_s, rates...)");
  }
  const std::string p = "study.max_rate.";
  rd.only(*t, p,
          {"target", "tolerance", "max_probes", "measured_requests", "duration_s", "warmup_fraction",
           "cooldown_fraction", "rates"});
  SloSearchOptions o;
  o.target = rd.get<double>(*t, p, "target", "a number in (0, 1]").value_or(o.target);
  o.tolerance = rd.get<double>(*t, p, "tolerance", "a number in (0, 1)").value_or(0.05);
  o.max_probes = static_cast<int>(rd.get<std::int64_t>(*t, p, "max_probes", "an integer >= 2").value_or(o.max_probes));
  o.measured_requests = rd.get<std::int64_t>(*t, p, "measured_requests", "an integer >= 1").value_or(500);
  o.duration_s = rd.get<double>(*t, p, "duration_s", "seconds >= 0").value_or(0.0);
  o.warmup_fraction = rd.get<double>(*t, p, "warmup_fraction", "a share").value_or(o.warmup_fraction);
  o.cooldown_fraction = rd.get<double>(*t, p, "cooldown_fraction", "a share").value_or(o.cooldown_fraction);
  if (const toml::node* rates = t->get("rates")) {
    const toml::array* a = rates->as_array();
    if (!a) {
      rd.fail(p + "rates", "expected a list of rates (req/s, ascending)");
    }
    for (const toml::node& r : *a) {
      const auto v = r.value<double>();
      if (!v || !(*v > 0.0 && *v <= workloads::k_max_rate_rps) || (!o.rates.empty() && *v <= o.rates.back())) {
        rd.fail(p + "rates",
                fmt::format("expected rates in (0, {:g}] req/s in ascending order", workloads::k_max_rate_rps));
      }
      o.rates.push_back(*v);
    }
  }
  if (!(o.target > 0.0 && o.target <= 1.0) || !(o.tolerance > 0.0 && o.tolerance < 1.0) || o.max_probes < 2 ||
      o.measured_requests < 1 || o.duration_s < 0.0 || o.warmup_fraction < 0.0 || o.cooldown_fraction < 0.0 ||
      o.warmup_fraction + o.cooldown_fraction >= 0.9) {
    rd.fail("study.max_rate",
            "target in (0, 1], tolerance in (0, 1), max_probes >= 2, measured_requests >= 1, duration_s >= 0, "
            "warm-up and cool-down fractions >= 0 summing below 0.9");
  }
  return o;
}

ObjectiveConstraint parse_constraint(StudyReader& rd, const std::string& text) {
  const auto fail = [&] {
    rd.fail("study.objective.subject_to",
            fmt::format("\"{}\": expected \"metric >= number\" or \"metric <= number\"", text));
  };
  for (const auto& [op, at_least] : {std::pair{">=", true}, std::pair{"<=", false}}) {
    const std::size_t at = text.find(op);
    if (at == std::string::npos) {
      continue;
    }
    ObjectiveConstraint c;
    c.at_least = at_least;
    const auto trim = [](std::string s) {
      s.erase(0, s.find_first_not_of(' '));
      s.erase(s.find_last_not_of(' ') + 1);
      return s;
    };
    c.metric = trim(text.substr(0, at));
    const std::string bound = trim(text.substr(at + 2));
    try {
      std::size_t used = 0;
      c.bound = std::stod(bound, &used);
      if (used != bound.size() || c.metric.empty()) {
        fail();
      }
    } catch (const std::logic_error&) {
      fail();
    }
    return c;
  }
  fail();
  return {};
}

std::optional<StudyObjective> parse_objective(StudyReader& rd, const toml::table& study) {
  const toml::node* n = study.get("objective");
  if (!n) {
    return std::nullopt;
  }
  const toml::table* t = n->as_table();
  if (!t) {
    rd.fail("study.objective", "expected a table: maximize = \"metric\" (or minimize), subject_to = [...]");
  }
  const std::string p = "study.objective.";
  rd.only(*t, p, {"maximize", "minimize", "subject_to"});
  StudyObjective o;
  const auto max = rd.get<std::string>(*t, p, "maximize", "a metric name");
  const auto min = rd.get<std::string>(*t, p, "minimize", "a metric name");
  if (max.has_value() == min.has_value()) {
    rd.fail(p + "maximize", "give exactly one of maximize and minimize (a metric of runs.csv)");
  }
  o.maximize = max.has_value();
  o.metric = max ? *max : min.value_or("");
  for (const std::string& c : rd.strings(*t, p, "subject_to")) {
    o.subject_to.push_back(parse_constraint(rd, c));
  }
  return o;
}

std::vector<std::string> default_report(StudyKind kind) {
  switch (kind) {
    case StudyKind::whatif:
      return {"gpus",
              "ttft_ms.p90",
              "tpot_ms.p90",
              "slo.attainment",
              "slo.goodput_rps",
              "goodput_rps_per_gpu",
              "output_tokens_per_s_per_gpu"};
    case StudyKind::montecarlo:
      return {"ttft_ms.p90", "mean_step_ms", "straggler_gap_us.mean", "slo.goodput_rps"};
    case StudyKind::compare:
      return {"slo.attainment", "slo.goodput_rps", "ttft_ms.p90", "tpot_ms.p90"};
    case StudyKind::rebalance:
      return {"output_tokens_per_s",    "tpot_ms.p90",         "ttft_ms.p90", "gpu_balancedness",
              "rebalancing.rebalances", "rebalancing.stall_ms"};
    case StudyKind::grid:
      break;
  }
  return {"slo.attainment", "slo.goodput_rps", "ttft_ms.p90", "tpot_ms.p90", "mean_step_ms"};
}

// The base experiment: a file (relative to the study's folder) or an inline [base] table.
void load_base(StudyReader& rd, const toml::table& study, const toml::table& file, const std::string& dir,
               StudySpec& s) {
  const std::string p = "study.";
  const auto base_path = rd.get<std::string>(study, p, "base", "a path to a TOML experiment file");
  if (base_path.has_value() == file.contains("base")) {
    rd.fail(p + "base", "give the base experiment as study.base = \"path.toml\" or as a [base] table (one of them)");
  }
  if (base_path) {
    const std::filesystem::path path = std::filesystem::path(*base_path).is_absolute()
                                           ? std::filesystem::path(*base_path)
                                           : std::filesystem::path(dir) / *base_path;
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      rd.fail(p + "base", fmt::format("cannot open the base experiment {}", path.string()));
    }
    s.base_source = path.lexically_normal().string();
    s.base = parse_config_text(core::read_whole_input(in, s.base_source), s.base_source);
  } else {
    const toml::table* base = file.get_as<toml::table>("base");
    if (!base) {
      rd.fail("base", "expected a table: the base experiment");
    }
    s.base = *base;
    s.base_source = rd.source() + " [base]";
  }
  policies::expand_rebalance_shorthand(s.base);
}

// The seed families replications vary (montecarlo: the cluster only, by default).
VariedFamilies parse_vary(StudyReader& rd, const toml::table& study, StudyKind kind) {
  const std::string p = "study.";
  VariedFamilies out;
  if (study.contains("vary") || kind == StudyKind::montecarlo) {
    const std::vector<std::string> vary =
        study.contains("vary") ? rd.strings(study, p, "vary") : std::vector<std::string>{"cluster"};
    out = VariedFamilies{false, false, false};
    for (const std::string& f : vary) {
      if (f == "workload") {
        out.workload = true;
      } else if (f == "cluster") {
        out.cluster = true;
      } else if (f == "policy") {
        out.policy = true;
      } else {
        rd.fail(p + "vary", fmt::format("unknown seed family \"{}\"; valid: workload, cluster, policy", f));
      }
    }
  }
  return out;
}

// A rebalance study's own axes after the file's: redundant slots (when swept), then the schedules, whose
// first level, rebalancing off, is the baseline. The base must leave [policy.rebalance] to the sweep.
void add_rebalance_axes(StudyReader& rd, const toml::table& study, StudySpec& s) {
  if (s.kind != StudyKind::rebalance) {
    if (study.contains("rebalance")) {
      rd.fail("study.rebalance", "only a study of kind = \"rebalance\" takes [study.rebalance]");
    }
    return;
  }
  s.rebalance = parse_rebalance_sweep(study, rd.source());
  if (const toml::node* policy = s.base.get("policy");
      policy && policy->is_table() && policy->as_table()->contains("rebalance")) {
    rd.fail("study.base", fmt::format("{} sets policy.rebalance, which a rebalance study sets at every point: give its "
                                      "options in [study.rebalance] options = {{ ... }}",
                                      s.base_source));
  }
  for (const StudyAxis& a : s.axes) {
    if (a.name == k_schedule_axis || a.name == k_slots_axis) {
      rd.fail("axis",
              fmt::format("\"{}\" is the name of an axis a rebalance study makes; name yours otherwise", a.name));
    }
  }
  for (StudyAxis& a : rebalance_axes(*s.rebalance)) {
    s.axes.push_back(std::move(a));
  }
  check_point_count(rd, s.axes);
}

// The baseline level (compare / montecarlo: policy=linear when there is one) and the rate axis.
void resolve_baseline_and_rate_axis(StudyReader& rd, const toml::table& study, StudySpec& s) {
  const std::string p = "study.";
  const auto axis_named = [&](const std::string& n) {
    return std::find_if(s.axes.begin(), s.axes.end(), [&](const StudyAxis& a) { return a.name == n; });
  };
  if (const auto baseline = rd.get<std::string>(study, p, "baseline", "\"axis=label\", e.g. \"policy=linear\"")) {
    const std::size_t eq = baseline->find('=');
    const auto axis = eq == std::string::npos ? s.axes.end() : axis_named(baseline->substr(0, eq));
    if (axis == s.axes.end()) {
      rd.fail(p + "baseline", fmt::format("\"{}\": expected \"axis=label\" naming an axis of the study", *baseline));
    }
    const std::string label = baseline->substr(eq + 1);
    if (std::none_of(axis->levels.begin(), axis->levels.end(), [&](const AxisLevel& l) { return l.label == label; })) {
      rd.fail(p + "baseline", fmt::format("axis \"{}\" has no level \"{}\"", axis->name, label));
    }
    s.baseline = {axis->name, label};
  } else if (s.kind == StudyKind::rebalance) {
    s.baseline = {k_schedule_axis, k_rebalance_off};
  } else if (s.kind == StudyKind::montecarlo || s.kind == StudyKind::compare) {
    const auto policy = axis_named("policy");
    if (policy != s.axes.end() && std::any_of(policy->levels.begin(), policy->levels.end(),
                                              [](const AxisLevel& l) { return l.label == "linear"; })) {
      s.baseline = {"policy", "linear"};
    }
  }
  s.rate_axis = rd.get<std::string>(study, p, "rate_axis", "the name of the axis of arrival rates").value_or("");
  if (s.rate_axis.empty() && s.kind == StudyKind::compare) {
    s.rate_axis = "workload.rate_rps";
  }
  if (!s.rate_axis.empty()) {
    const auto axis = axis_named(s.rate_axis);
    if (axis == s.axes.end()) {
      rd.fail(p + "rate_axis", fmt::format("no axis \"{}\": a compare study needs an axis of arrival rates (key = "
                                           "\"workload.rate_rps\", values = [...])",
                                           s.rate_axis));
    }
    if (!axis->zip_with.empty() || (s.baseline.has_value() && s.baseline->first == s.rate_axis)) {
      rd.fail(p + "rate_axis", "the rate axis must be a plain (not zipped) axis and not the baseline's");
    }
  }
}

// An objective or constraint that names an axis uses the axis's value: it needs numbers. A name that is
// a key of the base experiment but no axis is refused: it is no metric, and every point would be
// infeasible (names of metrics are checked against the runs' when the points are planned).
void check_objective_names(StudyReader& rd, const StudySpec& s) {
  if (!s.objective) {
    return;
  }
  const StudyObjective& o = *s.objective;
  std::vector<std::pair<std::string, std::string>> names{{"study.objective", o.metric}};
  for (const ObjectiveConstraint& c : o.subject_to) {
    names.emplace_back("study.objective.subject_to", c.metric);
  }
  for (const auto& entry : names) {
    const std::string& where = entry.first;
    const std::string& name = entry.second;  // a plain reference: clang 15 cannot capture a structured binding
    check_label(rd, where, name);
    const auto axis = std::find_if(s.axes.begin(), s.axes.end(), [&](const StudyAxis& a) { return a.name == name; });
    if (axis == s.axes.end()) {
      continue;
    }
    if (std::any_of(axis->levels.begin(), axis->levels.end(), [](const AxisLevel& l) { return !l.value; })) {
      rd.fail(where, fmt::format("\"{}\" is an axis whose levels are not all numbers: an objective or constraint "
                                 "on an axis needs an axis of numeric values",
                                 name));
    }
  }
}

}  // namespace

std::string_view study_kind_name(StudyKind k) {
  for (const auto& [name, kind] : k_kinds) {
    if (kind == k) {
      return name;
    }
  }
  return "grid";
}

StudySpec load_study_text(std::string_view text, const std::string& source, const std::string& dir) {
  StudyReader rd(source);
  const toml::table file = parse_config_text(text, source);
  rd.only(file, "", {"study", "base", "axis"});
  StudySpec s;
  s.source = source;
  s.name = std::filesystem::path(source).stem().string();
  const toml::table* study = file.get_as<toml::table>("study");
  if (!study) {
    rd.fail("study", "a study file needs a [study] table (kind, base, replications...)");
  }
  const std::string p = "study.";
  rd.only(*study, p,
          {"kind", "base", "replications", "vary", "common_random_numbers", "baseline", "report", "save_runs",
           "max_rate", "objective", "rate_axis", "slo_target", "rebalance"});
  const std::string kind =
      rd.get<std::string>(*study, p, "kind", "grid, whatif, montecarlo, compare or rebalance").value_or("grid");
  const auto k = std::find_if(k_kinds.begin(), k_kinds.end(), [&](const auto& e) { return e.first == kind; });
  if (k == k_kinds.end()) {
    rd.fail(p + "kind", fmt::format("unknown kind \"{}\"; valid: grid, whatif, montecarlo, compare, rebalance", kind));
  }
  s.kind = k->second;

  load_base(rd, *study, file, dir, s);

  s.replications = rd.get<std::int64_t>(*study, p, "replications", "an integer >= 1")
                       .value_or(s.kind == StudyKind::montecarlo ? 20 : (s.kind == StudyKind::grid ? 1 : 3));
  if (s.replications < 1 || s.replications > 100000) {
    rd.fail(p + "replications", "expected an integer in [1, 100000]");
  }
  s.vary = parse_vary(rd, *study, s.kind);
  s.common_random_numbers = rd.get<bool>(*study, p, "common_random_numbers", "true or false").value_or(true);
  s.save_runs = rd.get<bool>(*study, p, "save_runs", "true or false").value_or(false);
  s.max_rate = parse_max_rate(rd, *study);
  s.objective = parse_objective(rd, *study);
  s.slo_target = rd.get<double>(*study, p, "slo_target", "a number in (0, 1]").value_or(0.9);
  if (!(s.slo_target > 0.0 && s.slo_target <= 1.0)) {
    rd.fail(p + "slo_target", "expected a number in (0, 1]");
  }
  s.report = rd.strings(*study, p, "report");
  if (s.report.empty()) {
    s.report = default_report(s.kind);
    if (s.max_rate) {
      s.report.emplace_back("max_rate_rps");
    }
  }

  s.axes = parse_axes(rd, file);
  add_rebalance_axes(rd, *study, s);
  std::int64_t points = 1;
  for (const StudyAxis& a : s.axes) {
    points *= a.zip_with.empty() ? static_cast<std::int64_t>(a.levels.size()) : 1;  // <= k_max_study_points
  }
  if (points * s.replications > k_max_study_runs) {
    rd.fail(p + "replications",
            fmt::format("{} points x {} replications is more than {} runs", points, s.replications, k_max_study_runs));
  }
  resolve_baseline_and_rate_axis(rd, *study, s);
  check_objective_names(rd, s);
  return s;
}

StudySpec load_study(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw core::ConfigError(path, "", "cannot open the study file");
  }
  return load_study_text(core::read_whole_input(in, path), path, std::filesystem::path(path).parent_path().string());
}

}  // namespace epsim::experiments
