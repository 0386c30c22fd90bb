// SPDX-License-Identifier: Apache-2.0
#include "experiments/studies/study_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "core/confidence.hpp"
#include "core/csv_lines.hpp"
#include "core/statistics.hpp"
#include "experiments/studies/probe_limits.hpp"
#include "experiments/studies/scaling_series.hpp"
#include "experiments/studies/slo_search.hpp"
#include "experiments/studies/study_values.hpp"

namespace epsim::experiments {
namespace {

constexpr double k_nan = std::numeric_limits<double>::quiet_NaN();

std::string csv_cell(const std::string& s) {
  return core::csv_quote(s);
}

std::string axis_header(const StudySpec& spec) {
  std::string out;
  for (const StudyAxis& a : spec.axes) {
    out += ",";
    out += csv_cell(a.name);
  }
  return out;
}

std::string axis_cells(const StudyPoint& p) {
  std::string out;
  for (const std::string& l : p.labels) {
    out += ",";
    out += csv_cell(l);
  }
  return out;
}

// Every metric any run reported, in order of first appearance over the runs.
std::vector<std::string> metric_names(const StudyRecords& records) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const RunRecord& r : records) {
    for (const auto& [name, value] : r.metrics) {
      if (seen.insert(name).second) {
        names.push_back(name);
      }
    }
  }
  return names;
}

// A metric's values summarized within its kind's range (metric_kind.hpp).
core::SampleSummary summary_of(const std::vector<double>& x, const std::string& metric) {
  return core::summarize_sample(finite(x), core::metric_kind(metric));
}

// The axes that move together with axis `a` (its zip partner and everything zipped with either).
std::vector<bool> zip_group(const StudySpec& spec, std::size_t a) {
  const std::string& root = spec.axes[a].zip_with.empty() ? spec.axes[a].name : spec.axes[a].zip_with;
  std::vector<bool> in(spec.axes.size(), false);
  for (std::size_t i = 0; i < spec.axes.size(); ++i) {
    in[i] = spec.axes[i].name == root || spec.axes[i].zip_with == root;
  }
  return in;
}

std::size_t axis_index(const StudySpec& spec, const std::string& name) {
  return static_cast<std::size_t>(
      std::find_if(spec.axes.begin(), spec.axes.end(), [&](const StudyAxis& a) { return a.name == name; }) -
      spec.axes.begin());
}

// The point that differs from `p` only in the baseline axis (and what is zipped with it), at the
// baseline level; -1 without a baseline. `ignore` marks axes that may differ too (the rate axis).
int baseline_of(const StudySpec& spec, const StudyPlan& plan, const StudyPoint& p, const std::vector<bool>& ignore) {
  if (!spec.baseline) {
    return -1;
  }
  const std::size_t b = axis_index(spec, spec.baseline->first);
  const auto& levels = spec.axes[b].levels;
  const auto want = static_cast<std::size_t>(
      std::find_if(levels.begin(), levels.end(), [&](const AxisLevel& l) { return l.label == spec.baseline->second; }) -
      levels.begin());
  const std::vector<bool> group = zip_group(spec, b);
  for (const StudyPoint& q : plan.points) {
    bool match = q.level[b] == want;
    for (std::size_t a = 0; a < spec.axes.size() && match; ++a) {
      match = group[a] || ignore[a] || q.level[a] == p.level[a];
    }
    if (match) {
      return q.index;
    }
  }
  return -1;
}

std::string baseline_header(const StudySpec& spec) {
  return spec.baseline ? ",baseline_diff,baseline_diff_ci95_low,baseline_diff_ci95_high,baseline_rel_diff" : "";
}

// The change of a proportion is its difference (x 100: percentage points): relative to a baseline near
// 0 it would read +-3,000 %, so baseline_rel_diff stays empty for proportions.
std::string baseline_cells(const StudySpec& spec, const std::vector<double>& x, const std::vector<double>& base,
                           core::MetricKind kind) {
  if (!spec.baseline) {
    return "";
  }
  if (base.empty()) {
    return ",,,,";
  }
  const core::SampleSummary d = paired(x, base, kind);
  const core::SampleSummary b = core::summarize_sample(finite(base), kind);
  const double rel = kind != core::MetricKind::proportion && b.n > 0 && b.mean != 0.0 ? d.mean / b.mean : k_nan;
  return fmt::format(",{},{},{},{}", csv_number(d.mean), csv_number(d.ci_low), csv_number(d.ci_high), csv_number(rel));
}

// The points with the rate axis removed: groups of points differing only by their rate, in order.
struct RateGroups {
  std::vector<std::vector<int>> members;  // per group: its points, ascending rate
  std::vector<int> group_of;              // per point
};

RateGroups rate_groups(const StudySpec& spec, const StudyPlan& plan) {
  RateGroups g;
  const std::size_t ra = axis_index(spec, spec.rate_axis);
  std::map<std::vector<std::size_t>, int> index;
  for (const StudyPoint& p : plan.points) {
    std::vector<std::size_t> key = p.level;
    key[ra] = 0;
    const auto [it, added] = index.emplace(key, static_cast<int>(g.members.size()));
    if (added) {
      g.members.emplace_back();
    }
    g.members[static_cast<std::size_t>(it->second)].push_back(p.index);
    g.group_of.push_back(it->second);
  }
  for (auto& m : g.members) {
    std::stable_sort(m.begin(), m.end(), [&](int a, int b) {
      return plan.points[static_cast<std::size_t>(a)].config.workload.arrivals.rate_rps <
             plan.points[static_cast<std::size_t>(b)].config.workload.arrivals.rate_rps;
    });
  }
  return g;
}

// Per replication: the max rate of one group's curve; `brackets` (optional) gets each replication's
// curve_bracket.
std::vector<double> group_max_rates(const StudySpec& spec, const StudyPlan& plan, const StudyRecords& records,
                                    const std::vector<int>& members, std::int64_t& censored,
                                    std::vector<std::pair<double, double>>* brackets = nullptr) {
  std::vector<double> rates;
  rates.reserve(members.size());
  for (const int p : members) {
    rates.push_back(plan.points[static_cast<std::size_t>(p)].config.workload.arrivals.rate_rps);
  }
  std::vector<double> out;
  for (std::int64_t r = 0; r < plan.replications; ++r) {
    std::vector<double> attainment;
    attainment.reserve(members.size());
    for (const int p : members) {
      attainment.push_back(
          metric_value(records[static_cast<std::size_t>(p * plan.replications + r)].metrics, "slo.attainment"));
    }
    bool c = false;
    out.push_back(max_rate_from_curve(rates, attainment, spec.slo_target, c));
    censored += c ? 1 : 0;
    if (brackets != nullptr) {
      brackets->push_back(curve_bracket(rates, attainment, spec.slo_target));
    }
  }
  return out;
}

// The replications' brackets as their low ends and their high ends.
std::pair<std::vector<double>, std::vector<double>> split_brackets(
    const std::vector<std::pair<double, double>>& brackets) {
  std::pair<std::vector<double>, std::vector<double>> out;
  out.first.reserve(brackets.size());
  out.second.reserve(brackets.size());
  for (const auto& [low, high] : brackets) {
    out.first.push_back(low);
    out.second.push_back(high);
  }
  return out;
}

// The replications' brackets combined with their spread (combine_brackets).
RateInterval bracket_interval(const std::vector<std::pair<double, double>>& brackets) {
  const auto [lows, highs] = split_brackets(brackets);
  return combine_brackets(lows, highs);
}

// A [study.max_rate] metric's table cell: the mean answer with its runs' brackets combined with their
// spread, per GPU for max_rate_rps_per_gpu; empty for other metrics.
std::string search_rate_cell(const StudyPlan& plan, const StudyRecords& records, const StudyPoint& p,
                             const std::string& metric) {
  if (metric != "max_rate_rps" && metric != "max_rate_rps_per_gpu") {
    return "";
  }
  const double per = metric == "max_rate_rps" ? 1.0 : static_cast<double>(p.config.cluster.num_gpus());
  const std::vector<double> lows = values_of(plan, records, p.index, "max_rate_rps");
  const std::vector<double> highs = values_of(plan, records, p.index, "max_rate_bracket_high_rps");
  const std::vector<double> censored = values_of(plan, records, p.index, "max_rate_censored");
  std::vector<double> l;
  std::vector<double> h;
  l.reserve(lows.size());
  h.reserve(lows.size());
  for (std::size_t r = 0; r < lows.size(); ++r) {
    if (std::isnan(censored[r]) || std::isnan(lows[r])) {
      return "";  // runs from before brackets were recorded
    }
    l.push_back(lows[r] / per);
    h.push_back(censored[r] > 0.0 ? k_nan : highs[r] / per);
  }
  return l.empty() ? "" : format_rate_interval(core::summarize_sample(l).mean, combine_brackets(l, h));
}

std::string group_labels(const StudySpec& spec, const StudyPoint& p) {
  std::string out;
  const std::size_t ra = axis_index(spec, spec.rate_axis);
  for (std::size_t a = 0; a < spec.axes.size(); ++a) {
    if (a != ra) {
      out += ",";
      out += csv_cell(p.labels[a]);
    }
  }
  return out;
}

// "mean [low, high]": the interval may be asymmetric where it meets its kind's range.
std::string pm(const core::SampleSummary& s) {
  if (s.n == 0) {
    return "-";
  }
  return s.n >= 2 && !std::isnan(s.ci_low) ? fmt::format("{:.4g} [{:.4g}, {:.4g}]", s.mean, s.ci_low, s.ci_high)
                                           : fmt::format("{:.4g}", s.mean);
}

// A paired difference: proportions in percentage points, other metrics with their change in %.
std::string diff_cell(const core::SampleSummary& d, double base_mean) {
  if (d.n < 2 || std::isnan(d.ci_low)) {
    return "-";
  }
  if (d.kind == core::MetricKind::proportion) {
    return fmt::format("{:+.3g} pp [{:+.3g}, {:+.3g}]", 100.0 * d.mean, 100.0 * d.ci_low, 100.0 * d.ci_high);
  }
  return fmt::format("{:+.3g} [{:+.3g}, {:+.3g}] {}", d.mean, d.ci_low, d.ci_high,
                     base_mean != 0.0 ? fmt::format("{:+.1f}%", 100.0 * d.mean / base_mean) : std::string("-"));
}

// The warning under a table whose intervals rest on fewer than k_min_interval_n replications.
std::string small_n_note(std::int64_t n) {
  if (n >= core::k_min_interval_n) {
    return "";
  }
  return n < 2 ? fmt::format("note: {} replication per point: no intervals (run replications >= {})\n", n,
                             core::k_min_interval_n)
               : fmt::format(
                     "warning: {} replications per point (< {}): the 95 % intervals use t = {:.1f} on {} "
                     "degree(s) of freedom and say little; run replications >= {}\n",
                     n, core::k_min_interval_n, core::student_t_quantile(0.95, n - 1), n - 1, core::k_min_interval_n);
}

// Left-aligned text columns.
std::string table_text(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()), 0);
    for (std::size_t c = 0; c < row.size(); ++c) {
      width[c] = std::max(width[c], row[c].size());
    }
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += row[c] + std::string(width[c] - row[c].size() + 2, ' ');
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
  }
  return out;
}

}  // namespace

std::string runs_csv(const StudySpec& spec, const StudyPlan& plan, const StudyRecords& records) {
  const std::vector<std::string> names = metric_names(records);
  std::string out = fmt::format("run,point,replication{},seed,workload_seed,cluster_seed", axis_header(spec));
  for (const std::string& n : names) {
    out += ",";
    out += csv_cell(n);
  }
  out += "\n";
  for (std::int64_t i = 0; i < plan.runs(); ++i) {
    const StudyRunSpec run = plan.run(i);
    const ExperimentConfig cfg = run_config(spec, plan, run);
    out += fmt::format("{},{},{}{},{},{},{}", i, run.point, run.replication,
                       axis_cells(plan.points[static_cast<std::size_t>(run.point)]), cfg.seed,
                       cfg.seed_of(SeedFamily::workload), cfg.seed_of(SeedFamily::cluster));
    for (const std::string& n : names) {
      out += ",";
      out += csv_number(metric_value(records[static_cast<std::size_t>(i)].metrics, n));
    }
    out += "\n";
  }
  return out;
}

std::string points_csv(const StudySpec& spec, const StudyPlan& plan, const StudyRecords& records) {
  const std::vector<std::string> names = metric_names(records);
  std::string out = fmt::format("point{},metric,n,mean,std,ci95_low,ci95_high{},kind,small_n\n", axis_header(spec),
                                baseline_header(spec));
  const std::vector<bool> none(spec.axes.size(), false);
  for (const StudyPoint& p : plan.points) {
    const int b = baseline_of(spec, plan, p, none);
    for (const std::string& n : names) {
      const std::vector<double> x = values_of(plan, records, p.index, n);
      const core::SampleSummary s = summary_of(x, n);
      if (s.n == 0) {
        continue;
      }
      const std::vector<double> base = b >= 0 ? values_of(plan, records, b, n) : std::vector<double>{};
      out += fmt::format("{}{},{},{},{},{},{},{}{},{},{}\n", p.index, axis_cells(p), csv_cell(n), s.n,
                         csv_number(s.mean), csv_number(s.stddev), csv_number(s.ci_low), csv_number(s.ci_high),
                         baseline_cells(spec, x, base, s.kind), core::metric_kind_name(s.kind), s.small_n() ? 1 : 0);
    }
  }
  return out;
}

std::string distribution_csv(const StudySpec& spec, const StudyPlan& plan, const StudyRecords& records) {
  const std::vector<std::string> names = metric_names(records);
  std::string out = fmt::format("point{},metric,n,min,p10,p25,p50,p75,p90,max\n", axis_header(spec));
  for (const StudyPoint& p : plan.points) {
    for (const std::string& n : names) {
      std::vector<double> x = finite(values_of(plan, records, p.index, n));
      if (x.empty()) {
        continue;
      }
      std::string row = fmt::format("{}{},{},{}", p.index, axis_cells(p), csv_cell(n), x.size());
      for (const double q : {0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0}) {
        row += ",";
        row += csv_number(core::quantile_inplace(x, q));
      }
      out += row + "\n";
    }
  }
  return out;
}

std::string scaling_csv(const StudySpec& spec, const StudyPlan& plan, const StudyRecords& records) {
  // gpus and ep_size are the x axes, already columns: a report metric of that name is not repeated.
  std::vector<std::string> metrics;
  metrics.reserve(spec.report.size());
  for (const std::string& m : spec.report) {
    if (m != "gpus" && m != "ep_size") {
      metrics.push_back(m);
    }
  }
  std::string out = fmt::format("point{},system,series,gpus,ep_size", axis_header(spec));
  for (const std::string& m : metrics) {
    out += fmt::format(",{0},{0}.ci95_low,{0}.ci95_high", csv_cell(m));
  }
  out += "\n";
  std::vector<const StudyPoint*> order;
  order.reserve(plan.points.size());
  for (const StudyPoint& p : plan.points) {
    order.push_back(&p);
  }
  std::stable_sort(order.begin(), order.end(), [](const StudyPoint* a, const StudyPoint* b) {
    return std::pair(a->config.cluster.num_gpus(), a->config.ep_size()) <
           std::pair(b->config.cluster.num_gpus(), b->config.ep_size());
  });
  const std::vector<ScalingSeries> series = scaling_series(spec, plan);
  for (const StudyPoint* p : order) {
    const ScalingSeries& row = series[static_cast<std::size_t>(p->index)];
    out += fmt::format("{}{},{},{},{},{}", p->index, axis_cells(*p), csv_cell(row.system), csv_cell(row.series),
                       p->config.cluster.num_gpus(), p->config.ep_size());
    for (const std::string& m : metrics) {
      const core::SampleSummary s = summary_of(values_of(plan, records, p->index, m), m);
      out += fmt::format(",{},{},{}", csv_number(s.mean), csv_number(s.ci_low), csv_number(s.ci_high));
    }
    out += "\n";
  }
  return out;
}

std::string max_rate_csv(const StudySpec& spec, const StudyPlan& plan, const StudyRecords& records) {
  if (spec.rate_axis.empty()) {
    return "";
  }
  const RateGroups g = rate_groups(spec, plan);
  std::string out = "group";
  const std::size_t ra = axis_index(spec, spec.rate_axis);
  for (std::size_t a = 0; a < spec.axes.size(); ++a) {
    if (a != ra) {
      out += ",";
      out += csv_cell(spec.axes[a].name);
    }
  }
  out += fmt::format(
      ",slo_target,n,max_rate_rps,std,ci95_low,ci95_high,censored,bracket_low_rps,bracket_high_rps,interval_low_rps,"
      "interval_high_rps{}\n",
      baseline_header(spec));
  std::vector<bool> ignore(spec.axes.size(), false);
  ignore[ra] = true;
  for (std::size_t i = 0; i < g.members.size(); ++i) {
    const StudyPoint& first = plan.points[static_cast<std::size_t>(g.members[i].front())];
    std::int64_t censored = 0;
    std::vector<std::pair<double, double>> brackets;
    const std::vector<double> x = group_max_rates(spec, plan, records, g.members[i], censored, &brackets);
    const core::SampleSummary s = summary_of(x, "max_rate_rps");
    // Means of the replications' brackets, and the interval combining them with their spread; no high
    // end (empty) when a replication's curve never fell below the target.
    const RateInterval bi = bracket_interval(brackets);
    const auto [lows, highs] = split_brackets(brackets);
    const double low_mean = core::summarize_sample(lows).mean;
    const double high_mean = bi.censored > 0 ? k_nan : core::summarize_sample(highs).mean;
    std::vector<double> base;
    const int b = baseline_of(spec, plan, first, ignore);
    if (b >= 0) {
      std::int64_t ignored = 0;
      base = group_max_rates(spec, plan, records,
                             g.members[static_cast<std::size_t>(g.group_of[static_cast<std::size_t>(b)])], ignored);
    }
    out += fmt::format("{}{},{},{},{},{},{},{},{},{},{},{},{}{}\n", i, group_labels(spec, first),
                       csv_number(spec.slo_target), s.n, csv_number(s.mean), csv_number(s.stddev), csv_number(s.ci_low),
                       csv_number(s.ci_high), censored, csv_number(low_mean), csv_number(high_mean), csv_number(bi.low),
                       csv_number(bi.high), baseline_cells(spec, x, base, s.kind));
  }
  return out;
}

namespace {

struct RankedPoint {
  int point = 0;
  double objective = 0.0;
  bool feasible = true;
  std::vector<double> constraints;
};

// Every point by the objective over its replications' means: feasible points first, best first.
// A name of the objective is an axis of numbers (its value at the point) or a metric (its mean over
// the point's replications; NaN when no run reported it).
std::vector<RankedPoint> rank_points(const StudySpec& spec, const StudyObjective& o, const StudyPlan& plan,
                                     const StudyRecords& records) {
  std::vector<RankedPoint> rows;
  const auto mean_of = [&](int p, const std::string& m) {
    const std::size_t a = axis_index(spec, m);
    if (a < spec.axes.size()) {
      const StudyPoint& point = plan.points[static_cast<std::size_t>(p)];
      return spec.axes[a].levels[point.level[a]].value.value_or(k_nan);
    }
    return core::summarize_sample(finite(values_of(plan, records, p, m))).mean;
  };
  for (const StudyPoint& p : plan.points) {
    RankedPoint r{p.index, mean_of(p.index, o.metric), true, {}};
    r.feasible = !std::isnan(r.objective);
    for (const ObjectiveConstraint& c : o.subject_to) {
      const double v = mean_of(p.index, c.metric);
      r.constraints.push_back(v);
      r.feasible = r.feasible && !std::isnan(v) && (c.at_least ? v >= c.bound : v <= c.bound);
    }
    rows.push_back(std::move(r));
  }
  std::stable_sort(rows.begin(), rows.end(), [&](const RankedPoint& a, const RankedPoint& b) {
    if (a.feasible != b.feasible) {
      return a.feasible;
    }
    if (std::isnan(a.objective) || std::isnan(b.objective)) {
      return !std::isnan(a.objective) && std::isnan(b.objective);
    }
    return o.maximize ? a.objective > b.objective : a.objective < b.objective;
  });
  return rows;
}

}  // namespace

std::string ranking_csv(const StudySpec& spec, const StudyPlan& plan, const StudyRecords& records) {
  if (!spec.objective) {
    return "";
  }
  const StudyObjective& o = *spec.objective;
  const std::vector<RankedPoint> rows = rank_points(spec, o, plan, records);
  std::string out = fmt::format("rank,point{},{},feasible", axis_header(spec), csv_cell(o.metric));
  for (const ObjectiveConstraint& c : o.subject_to) {
    out += ",";
    out += csv_cell(fmt::format("{} {} {}", c.metric, c.at_least ? ">=" : "<=", c.bound));
  }
  out += "\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const RankedPoint& r = rows[i];
    out += fmt::format("{},{}{},{},{}", i + 1, r.point, axis_cells(plan.points[static_cast<std::size_t>(r.point)]),
                       csv_number(r.objective), r.feasible ? 1 : 0);
    for (const double v : r.constraints) {
      out += ",";
      out += csv_number(v);
    }
    out += "\n";
  }
  return out;
}

std::string study_table(const StudySpec& spec, const StudyPlan& plan, const StudyRecords& records) {
  std::string out;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header{"point"};
  for (const StudyAxis& a : spec.axes) {
    header.push_back(a.name);
  }
  for (const std::string& m : spec.report) {
    header.push_back(m);
  }
  rows.push_back(header);
  const std::vector<bool> none(spec.axes.size(), false);
  for (const StudyPoint& p : plan.points) {
    std::vector<std::string> row{std::to_string(p.index)};
    row.insert(row.end(), p.labels.begin(), p.labels.end());
    for (const std::string& m : spec.report) {
      const std::string rate = search_rate_cell(plan, records, p, m);
      row.push_back(!rate.empty() ? rate : pm(summary_of(values_of(plan, records, p.index, m), m)));
    }
    rows.push_back(row);
  }
  out += fmt::format(
      "{} study, {} points x {} replications (mean [95 % interval], Student-t within each metric's "
      "range)\n",
      study_kind_name(spec.kind), plan.points.size(), plan.replications);
  if (spec.max_rate) {
    out +=
        "max rates: mean [lower 95 % bound of the rates that held, upper of the lowest that failed]; \">=\": no rate "
        "failed, a lower bound\n";
  }
  out += table_text(rows);
  out += small_n_note(plan.replications);
  if (spec.baseline && plan.replications >= 2) {
    out += fmt::format(
        "\npaired difference to {}={} (mean [95 % interval]; proportions in percentage points, others with their "
        "change in %):\n",
        spec.baseline->first, spec.baseline->second);
    rows.assign(1, header);
    for (const StudyPoint& p : plan.points) {
      const int b = baseline_of(spec, plan, p, none);
      if (b < 0 || b == p.index) {
        continue;
      }
      std::vector<std::string> row{std::to_string(p.index)};
      row.insert(row.end(), p.labels.begin(), p.labels.end());
      for (const std::string& m : spec.report) {
        const std::vector<double> base = values_of(plan, records, b, m);
        const core::SampleSummary d = paired(values_of(plan, records, p.index, m), base, core::metric_kind(m));
        row.push_back(diff_cell(d, core::summarize_sample(finite(base)).mean));
      }
      rows.push_back(row);
    }
    out += table_text(rows);
  }
  if (!spec.rate_axis.empty()) {
    const RateGroups g = rate_groups(spec, plan);
    out += fmt::format(
        "\nmax sustainable rate at {:.0f} % SLO attainment, from the rate grid (req/s): mean [lower 95 % bound of "
        "the rates that held, upper of the first that failed]; \">=\": a lower bound\n",
        100.0 * spec.slo_target);
    rows.clear();
    for (const auto& members : g.members) {
      const StudyPoint& first = plan.points[static_cast<std::size_t>(members.front())];
      std::int64_t censored = 0;
      std::vector<std::pair<double, double>> brackets;
      const core::SampleSummary s =
          summary_of(group_max_rates(spec, plan, records, members, censored, &brackets), "max_rate_rps");
      std::string labels = group_labels(spec, first);
      labels.erase(0, labels.empty() ? 0 : 1);
      rows.push_back({labels.empty() ? "(all)" : labels,
                      s.n == 0 ? "-" : format_rate_interval(s.mean, bracket_interval(brackets)),
                      censored > 0 ? fmt::format("({} replications met the target at every rate)", censored) : ""});
    }
    out += table_text(rows);
  }
  if (spec.objective) {
    const StudyObjective& o = *spec.objective;
    std::vector<std::string> constraints;
    constraints.reserve(o.subject_to.size());
    for (const ObjectiveConstraint& c : o.subject_to) {
      constraints.push_back(fmt::format("{} {} {}", c.metric, c.at_least ? ">=" : "<=", c.bound));
    }
    out += fmt::format("\nobjective: {} {}{}{}\n", o.maximize ? "maximize" : "minimize", o.metric,
                       constraints.empty() ? "" : " subject to ", fmt::join(constraints, ", "));
    // A name no run reported (a misspelt metric) makes every point infeasible: say which it is.
    std::vector<std::string> names{o.metric};
    for (const ObjectiveConstraint& c : o.subject_to) {
      names.push_back(c.metric);
    }
    const std::vector<std::string> reported = metric_names(records);
    for (const std::string& n : names) {
      if (axis_index(spec, n) == spec.axes.size() && std::find(reported.begin(), reported.end(), n) == reported.end()) {
        out += fmt::format(
            "no run reported a metric \"{}\" (runs.csv's columns are the metrics; an axis of numbers "
            "may be named too)\n",
            n);
      }
    }
    const std::vector<RankedPoint> ranked = rank_points(spec, o, plan, records);
    if (ranked.empty() || !ranked.front().feasible) {
      out += "no point meets the constraints (ranking.csv lists them all)\n";
    } else {
      const StudyPoint& best = plan.points[static_cast<std::size_t>(ranked.front().point)];
      std::vector<std::string> labels;
      for (std::size_t a = 0; a < spec.axes.size(); ++a) {
        labels.push_back(fmt::format("{}={}", spec.axes[a].name, best.labels[a]));
      }
      out += fmt::format("best: point {} ({}): {} = {:.4g}\n", best.index, fmt::join(labels, ", "), o.metric,
                         ranked.front().objective);
    }
  }
  out += study_limits_text(plan, records);
  return out;
}

}  // namespace epsim::experiments
