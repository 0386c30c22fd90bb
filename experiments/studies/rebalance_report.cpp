// SPDX-License-Identifier: Apache-2.0
#include "experiments/studies/rebalance_report.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <map>

#include "core/csv_lines.hpp"

namespace epsim::experiments {
namespace {

constexpr double k_nan = std::numeric_limits<double>::quiet_NaN();
constexpr const char* k_throughput = "output_tokens_per_s";
constexpr const char* k_tpot = "tpot_ms.p90";

// The schedule axis is the study's last (rebalance_sweep.hpp), so a point's "off" point is the one at
// its schedule level 0: `level` points back.
std::size_t schedule_axis(const StudySpec& spec) {
  return spec.axes.size() - 1;
}

int off_point(const StudySpec& spec, const StudyPoint& p) {
  return p.index - static_cast<int>(p.level[schedule_axis(spec)]);
}

// The relative paired change of `metric` at `point` against `base` (mean, 95 % low, high), or NaNs.
struct Change {
  double mean = k_nan;
  double low = k_nan;
  double high = k_nan;
};

Change change(const StudyPlan& plan, const StudyRecords& records, int point, int base, const std::string& metric) {
  const std::vector<double> x = values_of(plan, records, point, metric);
  const std::vector<double> b = values_of(plan, records, base, metric);
  const core::SampleSummary d = paired(x, b, core::MetricKind::unbounded);
  const core::SampleSummary bs = core::summarize_sample(finite(b), core::MetricKind::unbounded);
  if (d.n == 0 || bs.n == 0 || bs.mean == 0.0) {
    return {};
  }
  return {d.mean / bs.mean, d.ci_low / bs.mean, d.ci_high / bs.mean};
}

double mean_of(const StudyPlan& plan, const StudyRecords& records, int point, const std::string& metric) {
  const core::SampleSummary s = core::summarize_sample(finite(values_of(plan, records, point, metric)));
  return s.n > 0 ? s.mean : k_nan;
}

// The throughput change of a rebalancing point, unknown where its runs never rebalanced (an interval
// longer than the run says nothing about the interval's worth: it would read as a break-even of 0).
Change rebalanced_change(const StudyPlan& plan, const StudyRecords& records, int point, int off) {
  const core::SampleSummary n =
      core::summarize_sample(finite(values_of(plan, records, point, "rebalancing.rebalances")));
  if (n.n == 0 || !(n.mean >= 1.0)) {
    return {};
  }
  return change(plan, records, point, off, k_throughput);
}

// The other axes' labels of a point (every axis but the schedule), as CSV cells with a leading comma.
std::string other_cells(const StudySpec& spec, const StudyPoint& p) {
  std::string out;
  for (std::size_t a = 0; a + 1 < spec.axes.size(); ++a) {
    out += ',';
    out += core::csv_quote(p.labels[a]);
  }
  return out;
}

std::string other_header(const StudySpec& spec) {
  std::string out;
  for (std::size_t a = 0; a + 1 < spec.axes.size(); ++a) {
    out += ',';
    out += core::csv_quote(spec.axes[a].name);
  }
  return out;
}

// One mode's curve at one set of other levels: its points in interval order and the off point.
struct Curve {
  int off = -1;
  std::string migration;
  std::vector<int> points;
};

std::vector<Curve> curves(const StudySpec& spec, const RebalanceSweep& r, const StudyPlan& plan) {
  std::vector<Curve> out;
  std::map<std::pair<int, std::string>, std::size_t> index;
  for (const StudyPoint& p : plan.points) {
    const std::size_t level = p.level[schedule_axis(spec)];
    if (level == 0) {
      continue;
    }
    const auto key = std::make_pair(off_point(spec, p), r.migration_of(level));
    const auto [it, added] = index.emplace(key, out.size());
    if (added) {
      out.push_back(Curve{key.first, key.second, {}});
    }
    out[it->second].points.push_back(p.index);  // intervals ascend within a mode
  }
  return out;
}

// A curve's throughput changes in interval order (mean and 95 % ends; NaN where its runs never
// rebalanced) and its best point.
struct CurveChanges {
  std::vector<double> mean;
  std::vector<double> low;
  std::vector<double> high;
  int best = -1;  ///< the point of the largest mean change; -1: none known
  Change best_change;
};

CurveChanges curve_changes(const StudyPlan& plan, const StudyRecords& records, const Curve& c) {
  CurveChanges out;
  for (const int p : c.points) {
    const Change ch = rebalanced_change(plan, records, p, c.off);
    out.mean.push_back(ch.mean);
    out.low.push_back(ch.low);
    out.high.push_back(ch.high);
    if (!std::isnan(ch.mean) && (out.best < 0 || ch.mean > out.best_change.mean)) {
      out.best = p;
      out.best_change = ch;
    }
  }
  return out;
}

}  // namespace

std::string_view to_string(BreakEven::Status s) {
  switch (s) {
    case BreakEven::Status::crosses:
      return "crosses";
    case BreakEven::Status::pays_from_first:
      return "pays_from_first";
    case BreakEven::Status::never_pays:
      return "never_pays";
    case BreakEven::Status::unknown:
      break;
  }
  return "unknown";
}

BreakEven break_even(const std::vector<std::int64_t>& intervals, const std::vector<double>& gain) {
  bool known = false;
  for (std::size_t i = 0; i < intervals.size() && i < gain.size(); ++i) {
    if (std::isnan(gain[i])) {
      continue;
    }
    known = true;
    if (gain[i] < 0.0) {
      continue;
    }
    if (i == 0) {
      return {BreakEven::Status::pays_from_first, static_cast<double>(intervals[0])};
    }
    if (std::isnan(gain[i - 1])) {
      return {BreakEven::Status::unknown, k_nan};  // a gap right before the crossing: no interpolation
    }
    const double x0 = std::log(static_cast<double>(intervals[i - 1]));
    const double x1 = std::log(static_cast<double>(intervals[i]));
    const double t = gain[i - 1] / (gain[i - 1] - gain[i]);  // gain[i - 1] < 0 <= gain[i]
    return {BreakEven::Status::crosses, std::exp(x0 + t * (x1 - x0))};
  }
  return {known ? BreakEven::Status::never_pays : BreakEven::Status::unknown, k_nan};
}

std::string rebalance_csv(const StudySpec& spec, const StudyPlan& plan, const StudyRecords& records) {
  if (!spec.rebalance) {
    return "";
  }
  const RebalanceSweep& r = *spec.rebalance;
  std::string out = fmt::format(
      "point{},migration,interval_steps,n,throughput_tokens_per_s,throughput_change,throughput_change_ci95_low,"
      "throughput_change_ci95_high,tpot_p90_ms,tpot_p90_change,tpot_p90_change_ci95_low,tpot_p90_change_ci95_high,"
      "ttft_p90_ms,gpu_balancedness,rebalances,stall_ms,stall_share,gb_moved\n",
      other_header(spec));
  for (const StudyPoint& p : plan.points) {
    const std::size_t level = p.level[schedule_axis(spec)];
    const int off = off_point(spec, p);
    const Change th = level == 0 ? Change{} : change(plan, records, p.index, off, k_throughput);
    const Change tp = level == 0 ? Change{} : change(plan, records, p.index, off, k_tpot);
    // The stall's share of each run's makespan, averaged over replications.
    const std::vector<double> stall = values_of(plan, records, p.index, "rebalancing.stall_ms");
    const std::vector<double> makespan = values_of(plan, records, p.index, "makespan_s");
    std::vector<double> share;
    for (std::size_t i = 0; i < stall.size(); ++i) {
      if (!std::isnan(stall[i]) && makespan[i] > 0.0) {
        share.push_back(stall[i] / (makespan[i] * 1e3));
      }
    }
    const core::SampleSummary sh = core::summarize_sample(share);
    const std::size_t n = finite(values_of(plan, records, p.index, k_throughput)).size();
    out += fmt::format(
        "{}{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", p.index, other_cells(spec, p),
        level == 0 ? std::string(k_rebalance_off) : r.migration_of(level),
        level == 0 ? std::string() : fmt::format("{}", r.interval_of(level)), n,
        csv_number(mean_of(plan, records, p.index, k_throughput)), csv_number(th.mean), csv_number(th.low),
        csv_number(th.high), csv_number(mean_of(plan, records, p.index, k_tpot)), csv_number(tp.mean),
        csv_number(tp.low), csv_number(tp.high), csv_number(mean_of(plan, records, p.index, "ttft_ms.p90")),
        csv_number(mean_of(plan, records, p.index, "gpu_balancedness")),
        csv_number(mean_of(plan, records, p.index, "rebalancing.rebalances")),
        csv_number(mean_of(plan, records, p.index, "rebalancing.stall_ms")), csv_number(sh.n > 0 ? sh.mean : k_nan),
        csv_number(mean_of(plan, records, p.index, "rebalancing.gb_moved")));
  }
  return out;
}

std::string break_even_csv(const StudySpec& spec, const StudyPlan& plan, const StudyRecords& records) {
  if (!spec.rebalance) {
    return "";
  }
  const RebalanceSweep& r = *spec.rebalance;
  std::string out = fmt::format(
      "off_point{},migration,status,break_even_interval_steps,break_even_ci95_low_steps,break_even_ci95_high_steps,"
      "break_even_s,best_interval_steps,best_throughput_change,best_throughput_change_ci95_low,"
      "best_throughput_change_ci95_high\n",
      other_header(spec));
  for (const Curve& c : curves(spec, r, plan)) {
    const CurveChanges ch = curve_changes(plan, records, c);
    const BreakEven at = break_even(r.intervals, ch.mean);
    // The optimistic band (upper bound of the change) pays first: the earliest plausible break-even.
    const BreakEven early = break_even(r.intervals, ch.high);
    const BreakEven late = break_even(r.intervals, ch.low);
    const int best = ch.best;
    const Change& best_change = ch.best_change;
    const double step_ms = mean_of(plan, records, c.off, "mean_step_ms");
    const StudyPoint& off = plan.points[static_cast<std::size_t>(c.off)];
    const auto value = [](const BreakEven& b) {
      return b.status == BreakEven::Status::crosses || b.status == BreakEven::Status::pays_from_first ? b.interval
                                                                                                      : k_nan;
    };
    out += fmt::format(
        "{}{},{},{},{},{},{},{},{},{},{},{}\n", c.off, other_cells(spec, off), c.migration, to_string(at.status),
        csv_number(value(at)), csv_number(value(early)), csv_number(value(late)), csv_number(value(at) * step_ms / 1e3),
        best < 0
            ? std::string()
            : fmt::format("{}", r.interval_of(plan.points[static_cast<std::size_t>(best)].level[schedule_axis(spec)])),
        csv_number(best_change.mean), csv_number(best_change.low), csv_number(best_change.high));
  }
  return out;
}

std::string break_even_lines(const StudySpec& spec, const StudyPlan& plan, const StudyRecords& records) {
  if (!spec.rebalance) {
    return "";
  }
  const RebalanceSweep& r = *spec.rebalance;
  std::string out = "break-even interval (throughput against rebalancing off):\n";
  for (const Curve& c : curves(spec, r, plan)) {
    const BreakEven at = break_even(r.intervals, curve_changes(plan, records, c).mean);
    const StudyPoint& off = plan.points[static_cast<std::size_t>(c.off)];
    std::string where;
    for (std::size_t a = 0; a + 1 < spec.axes.size(); ++a) {
      where += fmt::format("{}={} ", spec.axes[a].name, off.labels[a]);
    }
    std::string what;
    switch (at.status) {
      case BreakEven::Status::crosses:
        what = fmt::format("pays from every ~{:.0f} steps", at.interval);
        break;
      case BreakEven::Status::pays_from_first:
        what = fmt::format("pays at every interval swept (from {} steps)", r.intervals.front());
        break;
      case BreakEven::Status::never_pays:
        what = fmt::format("never pays up to {} steps", r.intervals.back());
        break;
      case BreakEven::Status::unknown:
        what = "unknown (runs without throughput)";
        break;
    }
    out += fmt::format("  {}{}: {}\n", where, c.migration, what);
  }
  return out;
}

}  // namespace epsim::experiments
