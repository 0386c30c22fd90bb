#include "report/run_figures.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

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
    const RequestSamples s = request_samples(*r.requests, r.summary);
    const std::pair<const char*, const std::vector<double>*> metrics[] = {
        {"TTFT (ms)", &s.ttft_ms}, {"TPOT (ms)", &s.tpot_ms}, {"E2E (ms)", &s.e2e_ms}};
    for (const auto& [panel, values] : metrics) {
      for (const auto& [x, f] : ecdf(*values, 300)) {
        rows.push_back({panel, r.label, x, f, std::nullopt, std::nullopt});
      }
    }
  }
  if (rows.empty()) {
    return;
  }
  LineChartOptions o;
  o.y_title = "share of requests";
  o.step = true;
  o.y_min = 0.0;
  o.y_max = 1.0;
  o.series_title = "run";
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
  std::vector<HeatCell> cells;
  double groups = 0.0;
  for (std::size_t i = 0; i < t.rows(); ++i) {
    groups = std::max(groups, t.number(i, group) + 1.0);
    if (t.number(i, group) != 0.0) {
      continue;
    }
    cells.push_back({t.text(i, gpu), t.text(i, layer), t.number(i, wait), t.number(i, slowest)});
  }
  out.push_back(heat_map({figure_id(r.label) + "-stragglers", fmt::format("Who waits for whom: {}", r.label),
                          fmt::format("Per MoE layer (rows) and GPU (columns) of EP group 0{}: the mean time the GPU "
                                      "waits for the layer's slowest GPU in the expert phase (us, colour), and in the "
                                      "tooltip the share of steps in which it was the slowest. A bright column is a "
                                      "GPU everyone else waits for only if it is dark itself: the slowest GPU waits 0.",
                                      groups > 1 ? fmt::format(" (of {})", groups) : "")},
                         {"GPU", "MoE layer", "mean wait (us)", "slowest share"}, cells));
}

}  // namespace

Figure run_time_series(const RunInput& r, std::size_t max_bins) {
  const CsvTable& t = *r.steps;
  const std::size_t group = t.column("group");
  const std::size_t start = t.column("start_ns");
  const std::size_t duration = t.column("duration_ns");
  struct Panel {
    const char* column;
    const char* title;
    double scale;
    bool max;  // the bin's maximum, not its mean
  };
  const Panel panels[] = {{"duration_ns", "step time (ms)", 1e-6, false},
                          {"queued_requests", "queued requests", 1.0, true},
                          {"running_requests", "running requests", 1.0, false},
                          {"kv_used_fraction", "KV-cache use (%)", 100.0, true}};
  double t_end_s = 0.0;
  for (std::size_t i = 0; i < t.rows(); ++i) {
    t_end_s = std::max(t_end_s, (t.number(i, start) + t.number(i, duration)) * 1e-9);
  }
  const double bin_s = t.rows() <= max_bins || t_end_s <= 0.0 ? 0.0 : t_end_s / static_cast<double>(max_bins);
  std::vector<LinePoint> rows;
  for (const Panel& p : panels) {
    const auto col = t.find(p.column);
    if (!col.has_value()) {
      continue;
    }
    // (group, bin) -> sum, max, count.
    struct Acc {
      double sum = 0.0;
      double max = -INFINITY;
      double n = 0.0;
      double x = 0.0;
    };
    std::map<std::pair<int, std::int64_t>, Acc> bins;
    for (std::size_t i = 0; i < t.rows(); ++i) {
      const double x = t.number(i, start) * 1e-9;
      const auto b = bin_s > 0.0 ? static_cast<std::int64_t>(x / bin_s) : static_cast<std::int64_t>(i);
      Acc& a = bins[{static_cast<int>(t.number(i, group)), b}];
      const double v = t.number(i, *col) * p.scale;
      a.sum += v;
      a.max = std::max(a.max, v);
      a.n += 1.0;
      a.x = bin_s > 0.0 ? (static_cast<double>(b) + 0.5) * bin_s : x;
    }
    for (const auto& [key, a] : bins) {
      rows.push_back(
          {p.title, fmt::format("group {}", key.first), a.x, p.max ? a.max : a.sum / a.n, std::nullopt, std::nullopt});
    }
  }
  std::vector<Marker> markers;
  if (r.events.has_value()) {
    const CsvTable& e = *r.events;
    const std::size_t time = e.column("time_ns");
    const std::size_t kind = e.column("kind");
    for (std::size_t i = 0; i < e.rows(); ++i) {
      markers.push_back({e.number(i, time) * 1e-9, e.text(i, kind)});
    }
  }
  LineChartOptions o;
  o.x_title = "simulated time (s)";
  o.series_title = "EP group";
  o.columns = 2;
  const std::string binning =
      bin_s > 0.0 ? fmt::format(
                        "Steps binned into {} bins of {:.3g} s: step time and running requests are the bin's "
                        "mean, queue and KV use its maximum.",
                        max_bins, bin_s)
                  : "One point per step.";
  return line_chart({figure_id(r.label) + "-time-series", fmt::format("Steps over time: {}", r.label),
                     fmt::format("{} Vertical lines mark {} (events.csv).", binning,
                                 markers.empty() ? "migrations, rebalances and recalibrations when the run has any"
                                                 : "migrations, rebalances and recalibrations")},
                    o, rows, markers);
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
