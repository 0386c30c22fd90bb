// SPDX-License-Identifier: Apache-2.0
#include "report/rebalance_figures.hpp"

#include <fmt/format.h>

#include <cmath>

#include "report/vega_specs.hpp"

namespace epsim::report {
namespace {

// The other axes' levels of a row (between "point" and "migration") that differ between rows, as
// "name=label" with a dotted key's last part: its panel.
std::string panel_of(const CsvTable& t, std::size_t row) {
  std::string out;
  for (std::size_t c = t.column("point") + 1; c < t.column("migration"); ++c) {
    bool varies = false;
    for (std::size_t r = 1; r < t.rows() && !varies; ++r) {
      varies = t.text(r, c) != t.text(0, c);
    }
    if (!varies) {
      continue;
    }
    const std::string& name = t.header()[c];
    const std::size_t dot = name.rfind('.');
    out += fmt::format("{}{}={}", out.empty() ? "" : ", ", dot == std::string::npos ? name : name.substr(dot + 1),
                       t.text(row, c));
  }
  return out;
}

std::vector<LinePoint> curve_rows(const CsvTable& t, const std::string& column, const std::string& what, double scale) {
  std::vector<LinePoint> rows;
  const std::size_t interval = t.column("interval_steps");
  const std::size_t migration = t.column("migration");
  const auto lo = t.find(column + "_ci95_low");
  const auto hi = t.find(column + "_ci95_high");
  for (std::size_t r = 0; r < t.rows(); ++r) {
    const auto x = t.maybe_number(r, interval);
    const auto y = t.maybe_number(r, t.column(column));
    if (!x || !y || !std::isfinite(*y)) {
      continue;  // the off rows, and points whose runs never rebalanced
    }
    const auto scaled = [&](const std::optional<std::size_t>& c) -> std::optional<double> {
      if (!c) {
        return std::nullopt;
      }
      const auto v = t.maybe_number(r, *c);
      return v ? std::optional(*v * scale) : std::nullopt;
    };
    const std::string panel = panel_of(t, r);
    rows.push_back({panel.empty() ? what : fmt::format("{} | {}", what, panel), t.text(r, migration), *x, *y * scale,
                    scaled(lo), scaled(hi)});
  }
  return rows;
}

}  // namespace

std::vector<Figure> rebalance_figures(const StudyInput& s) {
  std::vector<Figure> out;
  if (!s.rebalance.has_value()) {
    return out;
  }
  const CsvTable& t = *s.rebalance;
  std::vector<LinePoint> rows = curve_rows(t, "throughput_change", "throughput", 100.0);
  std::vector<LinePoint> tpot = curve_rows(t, "tpot_p90_change", "TPOT p90", 100.0);
  rows.insert(rows.end(), tpot.begin(), tpot.end());
  if (!rows.empty()) {
    LineChartOptions o;
    o.x_title = "steps between rebalances";
    o.y_title = "change against off (%)";
    o.columns = 2;  // the panels' titles name the other axes' levels: three do not fit a laptop's width
    o.x_log = true;
    o.points = true;
    o.series_title = "migration";
    o.reference_y = 0.0;
    o.reference_label = "rebalancing off";
    out.push_back(line_chart(
        {figure_id(s.label) + "-rebalance-change", "Is rebalancing worth it? Change against rebalancing off",
         "Paired change of throughput (output tokens/s over the run) and of TPOT p90 against the same setting "
         "with rebalancing off, mean over replications with its 95 % interval (band), against the interval "
         "between rebalances, per migration mode; above 0 throughput gains (TPOT worsens). Where a curve crosses "
         "0 is the break-even interval (break_even.csv). Intervals whose runs never rebalanced are left out."},
        o, rows));
  }
  std::vector<LinePoint> stall;
  const std::size_t interval = t.column("interval_steps");
  for (std::size_t r = 0; r < t.rows(); ++r) {
    const auto x = t.maybe_number(r, interval);
    const auto y = t.maybe_number(r, t.column("stall_share"));
    if (x && y) {
      const std::string panel = panel_of(t, r);
      stall.push_back({panel.empty() ? "stall" : panel, t.text(r, t.column("migration")), *x, *y * 100.0, std::nullopt,
                       std::nullopt});
    }
  }
  if (!stall.empty()) {
    LineChartOptions o;
    o.x_title = "steps between rebalances";
    o.y_title = "stall (% of the run)";
    o.x_log = true;
    o.points = true;
    o.series_title = "migration";
    o.y_min = 0.0;
    out.push_back(line_chart({figure_id(s.label) + "-rebalance-stall", "Time the migrations stopped serving",
                              "Stop-the-world stall as a share of each run's makespan, mean over replications; "
                              "the other modes keep serving while weights move (0)."},
                             o, stall));
  }
  return out;
}

}  // namespace epsim::report
