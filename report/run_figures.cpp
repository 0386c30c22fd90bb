// SPDX-License-Identifier: Apache-2.0
#include "report/run_figures.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/error.hpp"
#include "report/request_samples.hpp"
#include "report/vega_specs.hpp"

namespace epsim::report {
namespace {

void latency_cdfs(const std::vector<RunInput>& runs, std::vector<Figure>& out) {
  std::vector<LinePoint> rows;
  for (const RunInput& r : runs) {
    if (!r.requests.has_value()) {
      continue;
    }
    append_latency_cdf_rows(request_samples(*r.requests, r.summary), r.label, 300, rows);
  }
  if (rows.empty()) {
    return;
  }
  const LineChartOptions o = cdf_options("share of requests", "run");
  out.push_back(line_chart({"runs-latency-cdfs", "TTFT, TPOT and E2E distributions",
                            "Empirical CDFs of each run's measured requests (the window of its summary: arrivals in "
                            "[warmup, last arrival - cooldown], finished; TPOT of requests with more than one output "
                            "token); at most 300 steps per curve."},
                           o, rows));
}

void heat_map_of(const RunInput& r, std::vector<Figure>& out) {
  if (!r.gpu_layers.has_value() || r.gpu_layers->rows() == 0) {
    return;
  }
  const CsvTable& t = *r.gpu_layers;
  const std::size_t group = t.column("group");
  const std::size_t layer = t.column("moe_layer");
  const std::size_t gpu = t.column("gpu");
  const std::size_t wait = t.column("mean_wait_us");
  const std::size_t slowest = t.column("slowest_share");
  // Two views of the same matrix: whom the layer waits for, and how long each GPU waits.
  std::vector<HeatCell> cells;
  double groups = 0.0;
  for (const bool share : {true, false}) {
    for (std::size_t i = 0; i < t.rows(); ++i) {
      groups = std::max(groups, t.number(i, group) + 1.0);
      if (t.number(i, group) != 0.0) {
        continue;
      }
      cells.push_back({share ? "share of steps as the slowest GPU" : "mean wait for the slowest GPU (us)",
                       t.text(i, gpu), t.text(i, layer), t.number(i, share ? slowest : wait)});
    }
  }
  out.push_back(heat_map({figure_id(r.label) + "-stragglers", fmt::format("Who waits for whom: {}", r.label),
                          fmt::format("Per MoE layer (rows) and GPU (columns) of EP group 0{}, over every step "
                                      "(gpu_layers.csv). Left: the share of steps in which the GPU was the layer's "
                                      "slowest in the expert phase (the straggler everyone waits for). Right: the mean "
                                      "time the GPU waits for that straggler.",
                                      groups > 1 ? fmt::format(" (of {})", groups) : "")},
                         {"GPU", "MoE layer", 2}, cells));
}

}  // namespace

namespace {

enum class Reduce { mean, max, sum };

// One time-series panel: a steps.csv column, scaled, reduced per bin.
struct SeriesPanel {
  const char* column;
  const char* title;
  double scale;
  Reduce reduce;
};

// The panel's points per EP group: one per step (bin_s = 0) or one per time bin of bin_s seconds.
void append_panel_rows(const CsvTable& t, const SeriesPanel& p, std::size_t col, double bin_s,
                       std::vector<LinePoint>& rows) {
  struct Acc {
    double sum = 0.0;
    double max = -INFINITY;
    double n = 0.0;
    double x = 0.0;
  };
  const std::size_t group = t.column("group");
  const std::size_t start = t.column("start_ns");
  std::map<std::pair<int, std::int64_t>, Acc> bins;  // (group, bin)
  for (std::size_t i = 0; i < t.rows(); ++i) {
    const double x = t.number(i, start) * 1e-9;
    const auto b = bin_s > 0.0 ? static_cast<std::int64_t>(x / bin_s) : static_cast<std::int64_t>(i);
    Acc& a = bins[{static_cast<int>(t.number(i, group)), b}];
    const double v = t.number(i, col) * p.scale;
    a.sum += v;
    a.max = std::max(a.max, v);
    a.n += 1.0;
    a.x = bin_s > 0.0 ? (static_cast<double>(b) + 0.5) * bin_s : x;
  }
  for (const auto& [key, a] : bins) {
    const double y = p.reduce == Reduce::max ? a.max : p.reduce == Reduce::sum ? a.sum : a.sum / a.n;
    rows.push_back({p.title, fmt::format("group {}", key.first), a.x, y, std::nullopt, std::nullopt});
  }
}

// Placement changes as vertical lines: rebalances (their kind) and migrations; preemptions have their
// panel. More than k_max_markers lines would hide the data: then the rebalances only, said in `note`.
std::vector<Marker> placement_markers(const CsvTable& e, std::string& note) {
  constexpr std::size_t k_max_markers = 300;
  const std::size_t time = e.column("time_ns");
  const std::size_t kind = e.column("kind");
  std::vector<Marker> markers;
  for (std::size_t i = 0; i < e.rows(); ++i) {
    if (e.text(i, kind) != "preemption") {
      markers.push_back({e.number(i, time) * 1e-9, e.text(i, kind)});
    }
  }
  if (markers.size() > k_max_markers) {
    const std::size_t all = markers.size();
    std::erase_if(markers, [](const Marker& m) { return m.kind == "migration"; });
    note = fmt::format(" ({} of {} events: migrations left out, see events.csv)", markers.size(), all);
  }
  return markers;
}

}  // namespace

Figure run_time_series(const RunInput& r, std::size_t max_bins) {
  if (!r.steps.has_value()) {
    throw core::Error(fmt::format("{}: no steps.csv for the time series", r.dir.string()));
  }
  const CsvTable& t = r.steps.value();
  // Queues and KV use by their peak in a bin (what overload looks like), preemptions counted.
  const SeriesPanel panels[] = {{"duration_ns", "step time (ms)", 1e-6, Reduce::mean},
                                {"queued_requests", "queued requests", 1.0, Reduce::max},
                                {"running_requests", "running requests", 1.0, Reduce::mean},
                                {"kv_used_fraction", "KV-cache use (%)", 100.0, Reduce::max},
                                {"preemptions", "preemptions", 1.0, Reduce::sum}};
  const std::size_t start = t.column("start_ns");
  const std::size_t duration = t.column("duration_ns");
  double t_end_s = 0.0;
  for (std::size_t i = 0; i < t.rows(); ++i) {
    t_end_s = std::max(t_end_s, (t.number(i, start) + t.number(i, duration)) * 1e-9);
  }
  const double bin_s = t.rows() <= max_bins || t_end_s <= 0.0 ? 0.0 : t_end_s / static_cast<double>(max_bins);
  std::vector<LinePoint> rows;
  for (const SeriesPanel& p : panels) {
    const auto col = t.find(p.column);
    if (!col.has_value()) {
      continue;  // steps.csv of an older epsim
    }
    double total = 0.0;
    for (std::size_t i = 0; i < t.rows(); ++i) {
      total += t.number(i, *col);
    }
    if (p.reduce == Reduce::sum && total == 0.0) {
      continue;  // a flat zero count says nothing
    }
    append_panel_rows(t, p, *col, bin_s, rows);
  }
  std::string marker_note;
  const std::vector<Marker> markers =
      r.events.has_value() ? placement_markers(*r.events, marker_note) : std::vector<Marker>{};
  LineChartOptions o;
  o.x_title = "simulated time (s)";
  o.series_title = "EP group";
  o.columns = 2;
  const std::string binning =
      bin_s > 0.0 ? fmt::format(
                        "Steps binned into {} bins of {:.3g} s: step time and running requests are the bin's "
                        "mean, queue and KV use its maximum, preemptions its count.",
                        max_bins, bin_s)
                  : "One point per step (queue, running requests and KV use at the step's start).";
  std::string events;
  if (!r.events.has_value()) {
    events = " Without events.csv (output.events_csv) no placement changes are marked.";
  } else if (markers.empty()) {
    events = " The run changed no placement (events.csv).";
  } else {
    events = fmt::format(" Vertical lines mark rebalances, recalibrations and weight migrations{} (events.csv).",
                         marker_note);
  }
  return line_chart(
      {figure_id(r.label) + "-time-series", fmt::format("Steps over time: {}", r.label), binning + events}, o, rows,
      markers);
}

std::vector<Figure> run_figures(const std::vector<RunInput>& runs) {
  std::vector<Figure> out;
  latency_cdfs(runs, out);
  for (const RunInput& r : runs) {
    heat_map_of(r, out);
    if (r.steps.has_value() && r.steps->rows() > 0) {
      out.push_back(run_time_series(r, 600));
    }
  }
  return out;
}

}  // namespace epsim::report
