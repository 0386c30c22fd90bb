// SPDX-License-Identifier: Apache-2.0
#include "report/study_figures.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/csv_lines.hpp"
#include "core/metric_kind.hpp"
#include "report/rebalance_figures.hpp"
#include "report/request_samples.hpp"
#include "report/vega_specs.hpp"

namespace epsim::report {
namespace {

// Rows of points.csv holding `metric`, by point index.
std::map<int, std::size_t> metric_rows(const StudyInput& s, const std::string& metric) {
  std::map<int, std::size_t> rows;
  const std::size_t m = s.points.column("metric");
  const std::size_t p = s.points.column("point");
  for (std::size_t r = 0; r < s.points.rows(); ++r) {
    if (s.points.text(r, m) == metric) {
      rows[static_cast<int>(s.points.number(r, p))] = r;
    }
  }
  return rows;
}

std::string prefix(const StudyInput& s) {
  return figure_id(s.label) + "-";
}

// Human names of the metrics figures show most.
std::string metric_title(const std::string& m) {
  static const std::map<std::string, std::string> k{
      {"slo.attainment", "SLO attainment"},
      {"slo.goodput_rps", "goodput (req/s)"},
      {"ttft_ms.p90", "p90 TTFT (ms)"},
      {"tpot_ms.p90", "p90 TPOT (ms)"},
      {"e2e_ms.p90", "p90 E2E (ms)"},
      {"mean_step_ms", "mean step (ms)"},
      {"max_rate_rps", "max sustainable rate (req/s)"},
      {"max_rate_rps_per_gpu", "max sustainable rate per GPU (req/s)"},
      {"goodput_rps_per_gpu", "goodput per GPU (req/s)"},
      {"output_tokens_per_s_per_gpu", "output tokens/s per GPU"},
      {"straggler_gap_us.mean", "mean straggler gap (us)"},
      {"barrier_idle_fraction", "barrier idle fraction"},
      {"speculative.mean_accepted_tokens", "accepted draft tokens per verify"},
      {"speculative.acceptance_rate", "draft acceptance rate"},
  };
  const auto it = k.find(m);
  return it == k.end() ? m : it->second;
}

std::optional<double> opt(const CsvTable& t, std::size_t row, const std::string& col) {
  const auto c = t.find(col);
  return c.has_value() ? t.maybe_number(row, *c) : std::nullopt;
}

// An interval bound kept to [low, high]: points.csv written before issue 35 had unclipped intervals.
std::optional<double> clamped(const std::optional<double>& v, double low, double high) {
  return v.has_value() ? std::optional(std::clamp(*v, low, high)) : std::nullopt;
}

// A band never leaves what its metric can be (an attainment above 1, a latency below 0).
LinePoint in_range(LinePoint p, const std::string& metric) {
  const core::MetricKind kind = core::metric_kind(metric);
  if (p.y >= core::kind_low(kind) && p.y <= core::kind_high(kind)) {
    p.lo = clamped(p.lo, core::kind_low(kind), core::kind_high(kind));
    p.hi = clamped(p.hi, core::kind_low(kind), core::kind_high(kind));
  }
  return p;
}

IntervalPoint in_range(IntervalPoint p, double low, double high) {
  if (p.value >= low && p.value <= high) {
    p.lo = clamped(p.lo, low, high);
    p.hi = clamped(p.hi, low, high);
  }
  return p;
}

void rate_curves(const StudyInput& s, std::vector<Figure>& out) {
  if (s.rate_axis.empty() || !s.points.has(s.rate_axis)) {
    return;
  }
  const auto rows_of = [&](const std::string& metric, const std::string& panel) {
    std::vector<LinePoint> rows;
    for (const auto& [point, r] : metric_rows(s, metric)) {
      rows.push_back(in_range(
          {panel, point_label(s, r, s.rate_axis), rate_value(s, r), s.points.number(r, s.points.column("mean")),
           opt(s.points, r, "ci95_low"), opt(s.points, r, "ci95_high")},
          metric));
    }
    return rows;
  };
  std::vector<LinePoint> att = rows_of("slo.attainment", "SLO attainment");
  if (!att.empty()) {
    LineChartOptions o;
    o.x_title = "arrival rate (req/s)";
    o.y_title = "SLO attainment";
    o.series_title = "";
    o.points = true;
    o.y_min = 0.0;
    o.y_max = 1.0;
    o.reference_y = s.slo_target;
    o.reference_label = fmt::format("target {}", s.slo_target);
    out.push_back(line_chart(
        {prefix(s) + "attainment-vs-rate", "SLO attainment vs arrival rate",
         fmt::format(
             "Share of measured requests meeting both the TTFT and the TPOT target, mean over replications "
             "with its 95 % interval (band, Student-t within [0, 1]), against the offered rate; the dashed line is the "
             "target {} that defines the max sustainable rate.",
             s.slo_target)},
        o, att));
  }
  std::vector<LinePoint> lat;
  for (const char* m : {"slo.goodput_rps", "ttft_ms.p90", "tpot_ms.p90"}) {
    const auto r = rows_of(m, metric_title(m));
    lat.insert(lat.end(), r.begin(), r.end());
  }
  if (!lat.empty()) {
    LineChartOptions o;
    o.x_title = "arrival rate (req/s)";
    o.series_title = "";
    o.points = true;
    out.push_back(line_chart({prefix(s) + "latency-vs-rate", "Goodput and latency vs arrival rate",
                              "Mean over replications with 95 % intervals (bands, never below 0)."},
                             o, lat));
  }
}

void max_rate(const StudyInput& s, std::vector<Figure>& out) {
  std::vector<IntervalPoint> rows;
  std::string caption;
  if (s.max_rate.has_value()) {
    const CsvTable& t = *s.max_rate;
    const std::size_t first = t.column("group") + 1;
    const std::size_t last = t.column("slo_target");
    double censored = 0.0;
    for (std::size_t r = 0; r < t.rows(); ++r) {
      std::string label;
      for (std::size_t c = first; c < last; ++c) {
        label += (label.empty() ? "" : ", ") + t.text(r, c);
      }
      // The replications' brackets widened by their spread where max_rate.csv has them; a censored group
      // is a lower bound (open marker).
      const bool brackets = t.has("interval_low_rps");
      rows.push_back(
          in_range({"max sustainable rate (req/s)", label, t.number(r, t.column("max_rate_rps")),
                    opt(t, r, brackets ? "interval_low_rps" : "ci95_low"),
                    opt(t, r, brackets ? "interval_high_rps" : "ci95_high"), t.number(r, t.column("censored")) > 0},
                   0.0, INFINITY));
      censored += t.number(r, t.column("censored"));
    }
    if (t.has("baseline_diff")) {
      for (std::size_t r = 0; r < t.rows(); ++r) {
        std::string label;
        for (std::size_t c = first; c < last; ++c) {
          label += (label.empty() ? "" : ", ") + t.text(r, c);
        }
        const auto d = opt(t, r, "baseline_diff");
        if (d.has_value()) {
          rows.push_back({fmt::format("difference to {} (req/s)", s.baseline), label, *d,
                          opt(t, r, "baseline_diff_ci95_low"), opt(t, r, "baseline_diff_ci95_high")});
        }
      }
    }
    caption = fmt::format(
        "Per group, the highest rate of the grid whose attainment stays >= {} (interpolated to where each "
        "replication's curve crosses it), mean over replications; bars: {}{}.{}",
        s.slo_target,
        t.has("interval_low_rps") ? "from the lower 95 % bound of the rates that held to the upper bound of the first "
                                    "that failed (the grid's resolution and the replications' spread)"
                                  : "95 % interval",
        t.has("baseline_diff") ? "; right: the paired difference to the baseline" : "",
        censored > 0 ? fmt::format(" {} replication curve(s) never fell below the target: their rate is the grid's "
                                   "highest, a lower bound (open triangle; widen the grid).",
                                   censored)
                     : "");
  } else {
    // Bars from the lower 95 % bound of the rates that held to the upper bound of the lowest that failed
    // (max_rate_bracket_high_rps; the per-GPU one scaled alike); a censored point is a lower bound.
    const auto high = metric_rows(s, "max_rate_bracket_high_rps");
    const auto cens = metric_rows(s, "max_rate_censored");
    const auto gpus = metric_rows(s, "gpus");
    bool any_censored = false;
    for (const char* m : {"max_rate_rps", "max_rate_rps_per_gpu"}) {
      for (const auto& [point, r] : metric_rows(s, m)) {
        const double mean = s.points.number(r, s.points.column("mean"));
        std::optional<double> lo = opt(s.points, r, "ci95_low");
        std::optional<double> hi = opt(s.points, r, "ci95_high");
        const auto c = cens.find(point);
        const bool censored = c != cens.end() && s.points.number(c->second, s.points.column("mean")) > 0.0;
        const auto h = high.find(point);
        const auto g = gpus.find(point);
        if (!censored && h != high.end() && (m == std::string("max_rate_rps") || g != gpus.end())) {
          const double per =
              m == std::string("max_rate_rps") ? 1.0 : 1.0 / s.points.number(g->second, s.points.column("mean"));
          const double hm = s.points.number(h->second, s.points.column("mean"));
          lo = std::max(0.0, std::min(lo.value_or(mean), mean));
          hi = per * std::max(opt(s.points, h->second, "ci95_high").value_or(hm), hm);
        }
        any_censored = any_censored || censored;
        rows.push_back(in_range({metric_title(m), point_label(s, r), mean, lo, censored ? std::nullopt : hi, censored},
                                0.0, INFINITY));
      }
    }
    caption = fmt::format(
        "Each run's steady-state SLO search ([study.max_rate]), confirmed on a long window: mean over "
        "replications, in total and per GPU; bars from the lower 95 % bound of the rates that held to the upper "
        "bound of the lowest that failed (the search's resolution and the replications' spread).{}",
        any_censored ? " An open triangle is a lower bound: a search that never failed." : "");
  }
  if (rows.empty()) {
    return;
  }
  IntervalChartOptions o;
  o.reference_x = s.max_rate.has_value() && s.max_rate->has("baseline_diff") ? std::optional(0.0) : std::nullopt;
  out.push_back(interval_chart({prefix(s) + "max-rate", "Max sustainable rate", caption}, o, rows));
}

void scaling(const StudyInput& s, std::vector<Figure>& out) {
  if (!s.scaling.has_value()) {
    return;
  }
  const CsvTable& t = *s.scaling;
  const std::size_t gpus = t.column("gpus");
  // The axis columns end where system (or, in files before issue 35, gpus) begins.
  const std::optional<std::size_t> series_col = t.find("series");
  const std::size_t axes_end = t.find("system").value_or(gpus);
  const auto setup_of = [&](std::size_t r) {
    std::string label;
    for (std::size_t c = t.column("point") + 1; c < axes_end; ++c) {
      label += (label.empty() ? "" : " ") + t.text(r, c);
    }
    return label;
  };
  // One curve per system family and load (scaling_series.hpp); without that column, a series per
  // setup: never a line through different systems or rates.
  const auto series_of = [&](std::size_t r) { return series_col.has_value() ? t.text(r, *series_col) : setup_of(r); };
  std::vector<LinePoint> rows;
  for (std::size_t c = t.column("ep_size") + 1; c < t.header().size(); ++c) {
    const std::string& m = t.header()[c];
    // gpus is the x axis (scaling.csv before issue 15 also repeated it as a metric).
    if (m.ends_with(".ci95_low") || m.ends_with(".ci95_high") || m == "gpus" || m == "ep_size") {
      continue;
    }
    for (std::size_t r = 0; r < t.rows(); ++r) {
      const auto y = t.maybe_number(r, c);
      if (y.has_value() && std::isfinite(*y)) {
        rows.push_back(in_range({metric_title(m), series_of(r), t.number(r, gpus), *y, opt(t, r, m + ".ci95_low"),
                                 opt(t, r, m + ".ci95_high")},
                                m));
      }
    }
  }
  if (rows.empty()) {
    return;
  }
  LineChartOptions o;
  o.x_title = "GPUs";
  o.points = true;
  o.series_title = "system, load";
  std::string setups;
  for (std::size_t r = 0; r < t.rows(); ++r) {
    setups += fmt::format("{}{} = {} GPUs", setups.empty() ? "" : "; ", setup_of(r), t.text(r, gpus));
  }
  out.push_back(line_chart({prefix(s) + "scaling", "Scaling: the report metrics against GPUs",
                            fmt::format("Mean over replications with 95 % intervals (bands), total and per GPU, one "
                                        "point per setup ({}). A line joins only setups of one system family (cluster "
                                        "preset, GPU and fabric) at one offered load (rate, or rate per GPU when the "
                                        "study scales its load with its GPUs); a setup alone on its curve is a point.",
                                        setups)},
                           o, rows));
}

std::vector<std::string> distribution_metrics(const StudyInput& s) {
  std::vector<std::string> m;
  for (const std::string& r : s.report_metrics) {
    if (r != "gpus" && r != "ep_size" && s.runs.has(r)) {
      m.push_back(r);
    }
  }
  return m;
}

// Point index -> label, from the points.csv rows of any one metric.
std::map<int, std::string> point_labels(const StudyInput& s) {
  std::map<int, std::string> labels;
  const std::size_t p = s.points.column("point");
  for (std::size_t r = 0; r < s.points.rows(); ++r) {
    labels.emplace(static_cast<int>(s.points.number(r, p)), point_label(s, r));
  }
  return labels;
}

// A config-key axis whose levels are all numbers and that varies on its own (not zipped with another):
// each report metric against it, one curve per combination of the other axes.
void numeric_axis_curves(const StudyInput& s, std::vector<Figure>& out) {
  const nlohmann::json& axes = s.study["axes"];
  int drawn = 0;
  for (std::size_t a = 0; a < axes.size() && drawn < 2; ++a) {
    const std::string name = axes[a].value("name", "");
    const bool zipped = !axes[a].value("zip_with", std::string()).empty() || [&] {
      for (const auto& other : axes) {
        if (other.value("zip_with", std::string()) == name) {
          return true;
        }
      }
      return false;
    }();
    if (name == s.rate_axis || name.find('.') == std::string::npos || zipped) {
      continue;
    }
    const std::size_t col = s.points.column(name);
    bool numeric = true;
    std::set<double> levels;
    for (std::size_t r = 0; r < s.points.rows() && numeric; ++r) {
      double v = 0.0;
      numeric = core::parse_number(s.points.text(r, col), v);
      levels.insert(v);
    }
    if (!numeric || levels.size() < 2) {
      continue;
    }
    std::vector<LinePoint> rows;
    for (const std::string& m : distribution_metrics(s)) {
      for (const auto& [point, r] : metric_rows(s, m)) {
        rows.push_back(in_range(
            {metric_title(m), point_label(s, r, name), s.points.number(r, col),
             s.points.number(r, s.points.column("mean")), opt(s.points, r, "ci95_low"), opt(s.points, r, "ci95_high")},
            m));
      }
    }
    if (rows.empty()) {
      continue;
    }
    LineChartOptions o;
    o.x_title = name;
    o.points = true;
    o.series_title = "";
    out.push_back(line_chart({prefix(s) + "vs-" + figure_id(name), fmt::format("The report metrics against {}", name),
                              "Mean over replications with 95 % intervals (bands), one curve per level of the "
                              "other axes."},
                             o, rows));
    ++drawn;
  }
}

void monte_carlo(const StudyInput& s, std::vector<Figure>& out) {
  if (s.kind != "montecarlo" && !s.distribution.has_value()) {
    return;
  }
  const std::map<int, std::string> labels = point_labels(s);
  const std::size_t point_col = s.runs.column("point");
  std::vector<LinePoint> rows;
  for (const std::string& m : distribution_metrics(s)) {
    const std::size_t c = s.runs.column(m);
    std::map<int, std::vector<double>> by_point;
    for (std::size_t r = 0; r < s.runs.rows(); ++r) {
      const auto v = s.runs.maybe_number(r, c);
      if (v.has_value() && std::isfinite(*v)) {
        by_point[static_cast<int>(s.runs.number(r, point_col))].push_back(*v);
      }
    }
    for (const auto& [point, values] : by_point) {
      append_ecdf_rows(metric_title(m), labels.at(point), values, 400, rows);
    }
  }
  if (rows.empty()) {
    return;
  }
  const LineChartOptions o = cdf_options("share of replications", "");
  out.push_back(line_chart({prefix(s) + "distributions", "Distributions over replications (empirical CDFs)",
                            "Each replication is one draw (Monte Carlo: a cluster draw); a curve's value at x is the "
                            "share of draws at or below x. Curves to the left are better for latency metrics."},
                           o, rows));
}

void recovery(const StudyInput& s, std::vector<Figure>& out) {
  if (s.baseline.empty() || !s.points.has("baseline_rel_diff")) {
    return;
  }
  // baseline = "axis=label": that axis's column in points.csv.
  const auto eq = s.baseline.find('=');
  const std::string baseline_level = eq == std::string::npos ? "" : s.baseline.substr(eq + 1);
  const auto baseline_col = eq == std::string::npos ? std::nullopt : s.points.find(s.baseline.substr(0, eq));
  std::vector<IntervalPoint> rows;
  std::set<std::string> categories;
  for (const std::string& m : distribution_metrics(s)) {
    const core::MetricKind kind = core::metric_kind(m);
    for (const auto& [point, r] : metric_rows(s, m)) {
      if (baseline_col.has_value() && s.points.text(r, *baseline_col) == baseline_level) {
        continue;  // the baseline itself
      }
      const auto diff = opt(s.points, r, "baseline_diff");
      const auto lo = opt(s.points, r, "baseline_diff_ci95_low");
      const auto hi = opt(s.points, r, "baseline_diff_ci95_high");
      if (!diff.has_value() || !std::isfinite(*diff)) {
        continue;
      }
      const std::string label = point_label(s, r);
      if (kind == core::MetricKind::proportion) {
        // A proportion's change in percentage points: relative to a baseline near 0 it would explode.
        const auto points = [](const std::optional<double>& v) {
          return v.has_value() ? std::optional(100.0 * *v) : std::nullopt;
        };
        categories.insert(label);
        rows.push_back(in_range({metric_title(m) + ", change (points)", label, 100.0 * *diff, points(lo), points(hi)},
                                -100.0, 100.0));
        continue;
      }
      const auto rel = opt(s.points, r, "baseline_rel_diff");
      const double base = s.points.number(r, s.points.column("mean")) - *diff;
      if (!rel.has_value() || !std::isfinite(*rel) || base == 0.0) {
        continue;
      }
      const auto percent = [&](const std::optional<double>& v) {
        return v.has_value() ? std::optional(100.0 * *v / base) : std::nullopt;
      };
      categories.insert(label);
      // A non-negative quantity cannot fall by more than all of it: -100 %.
      rows.push_back(in_range({metric_title(m) + ", change (%)", label, 100.0 * *rel, percent(lo), percent(hi)},
                              kind == core::MetricKind::non_negative ? -100.0 : -INFINITY, INFINITY));
    }
  }
  if (rows.empty() || categories.size() > 40) {
    return;
  }
  IntervalChartOptions o;
  o.reference_x = 0.0;
  out.push_back(interval_chart(
      {prefix(s) + "vs-baseline", fmt::format("Change against the baseline ({})", s.baseline),
       "Mean of the per-replication differences to the baseline point with the paired 95 % interval (common "
       "random numbers remove the shared noise): for proportions (SLO attainment, fractions) the difference in "
       "percentage points, for other metrics relative to the baseline's mean in %. Negative is a recovery for "
       "latency, step time and straggler metrics."},
      o, rows));
}

void saved_run_cdfs(const StudyInput& s, std::vector<Figure>& out) {
  if (s.saved_runs.empty()) {
    return;
  }
  std::map<int, RequestSamples> by_point;
  for (const auto& run : s.saved_runs) {
    const RunInput r = load_run(run.dir, run.dir.filename().string());
    if (r.requests.has_value()) {
      by_point[run.point].append(request_samples(*r.requests, r.summary));
    }
  }
  std::map<int, std::string> labels = point_labels(s);
  // Many points make an unreadable legend: with a rate axis keep its highest rate, where policies differ most.
  std::string note;
  if (by_point.size() > 12 && !s.rate_axis.empty()) {
    double top = -INFINITY;
    std::map<int, double> rate_of;
    for (std::size_t r = 0; r < s.points.rows(); ++r) {
      const int p = static_cast<int>(s.points.number(r, s.points.column("point")));
      rate_of[p] = rate_value(s, r);
      top = std::max(top, rate_of[p]);
    }
    std::erase_if(by_point, [&](const auto& kv) { return rate_of[kv.first] != top; });
    note = fmt::format(" Shown at the highest rate of the grid ({} req/s).", top);
  }
  std::vector<LinePoint> rows;
  for (const auto& [point, samples] : by_point) {
    append_latency_cdf_rows(samples, labels[point], 200, rows);
  }
  if (rows.empty()) {
    return;
  }
  const LineChartOptions o = cdf_options("share of requests", "");
  out.push_back(line_chart({prefix(s) + "latency-cdfs", "TTFT, TPOT and E2E distributions (saved runs)",
                            "Empirical CDFs of the measured requests (the summary's window), every replication of a "
                            "point pooled; at most 200 steps per curve." +
                                note},
                           o, rows));
}

}  // namespace

std::vector<Figure> study_figures(const StudyInput& study) {
  std::vector<Figure> out;
  rate_curves(study, out);
  max_rate(study, out);
  scaling(study, out);
  std::vector<Figure> rebalance = rebalance_figures(study);
  out.insert(out.end(), std::make_move_iterator(rebalance.begin()), std::make_move_iterator(rebalance.end()));
  numeric_axis_curves(study, out);
  monte_carlo(study, out);
  recovery(study, out);
  saved_run_cdfs(study, out);
  return out;
}

}  // namespace epsim::report
