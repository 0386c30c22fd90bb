// SPDX-License-Identifier: Apache-2.0
#pragma once
// The report's three chart families as Vega specifications with their data inlined: small multiples of
// lines (with interval bands and vertical event markers), small multiples of estimates with intervals,
// and a heat map. Each returns the Figure with the CSV of exactly the rows it plots. Vega draws them in
// the page and, through the same library, into each figure's SVG (svg_export.hpp).
#include <optional>
#include <string>
#include <vector>

#include "report/figure.hpp"

namespace epsim::report {

/// What fits a report's card at a laptop's width (a 1,280 px window leaves about 1,170 px inside a card,
/// html_page.cpp): each chart family lays its panels and legend out within this width, and wraps or
/// compacts them to stay within this height (scripts/check-report-in-browser.sh measures both).
constexpr int k_figure_max_width_px = 1100;
constexpr int k_figure_max_height_px = 1200;

struct FigureText {
  std::string id;
  std::string title;
  std::string caption;
};

struct LineChartOptions {
  std::string x_title;
  std::string y_title;  ///< the y axis title; empty: each panel's name
  std::string series_title = "series";
  bool x_log = false;
  bool step = false;            ///< step-after interpolation (empirical CDFs)
  bool points = false;          ///< a marker at every point (sparse curves such as rate grids); else ~6 per curve
  std::optional<double> y_min;  ///< fixed y domain, e.g. [0, 1] for attainment and CDFs
  std::optional<double> y_max;
  std::optional<double> reference_y;  ///< a dashed horizontal line (an SLO target)
  std::string reference_label;
  int columns = 3;  ///< at most; fewer where they would not fit k_figure_max_width_px
};

/// Options of an empirical CDF: step lines on a [0, 1] y axis titled `y_title`.
LineChartOptions cdf_options(const std::string& y_title, const std::string& series_title);

/// Small multiples of lines, one per series, styled by series_style.hpp in the order the series first
/// appear in `rows` (the study's order, which the legend keeps); each panel scales its own axes.
Figure line_chart(const FigureText& text, const LineChartOptions& options, std::vector<LinePoint> rows,
                  const std::vector<Marker>& markers = {});

struct IntervalChartOptions {
  std::string x_title;  ///< empty: each panel's name
  std::string category_title;
  std::optional<double> reference_x;  ///< a vertical line (0 for differences)
  int columns = 4;                    ///< at most; fewer where they would not fit k_figure_max_width_px
};

/// Small multiples of estimates with intervals on a grid that shares the category labels across each
/// row of panels; category bands shrink (to 12 px) before the figure outgrows k_figure_max_height_px.
Figure interval_chart(const FigureText& text, const IntervalChartOptions& options, std::vector<IntervalPoint> rows);

struct HeatMapOptions {
  std::string x_title;
  std::string y_title;
  int columns = 2;
};

/// Small multiples of heat maps over the same x and y bands, a colour scale and legend per panel.
Figure heat_map(const FigureText& text, const HeatMapOptions& options, std::vector<HeatCell> cells);

}  // namespace epsim::report
