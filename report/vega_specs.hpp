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
  bool points = false;          ///< a symbol at every point (sparse curves such as rate grids)
  std::optional<double> y_min;  ///< fixed y domain, e.g. [0, 1] for attainment and CDFs
  std::optional<double> y_max;
  std::optional<double> reference_y;  ///< a dashed horizontal line (an SLO target)
  std::string reference_label;
  int columns = 3;
};

/// Options of an empirical CDF: step lines on a [0, 1] y axis titled `y_title`.
LineChartOptions cdf_options(const std::string& y_title, const std::string& series_title);

Figure line_chart(const FigureText& text, const LineChartOptions& options, std::vector<LinePoint> rows,
                  const std::vector<Marker>& markers = {});

struct IntervalChartOptions {
  std::string x_title;  ///< empty: each panel's name
  std::string category_title;
  std::optional<double> reference_x;  ///< a vertical line (0 for differences)
  int columns = 2;
};

Figure interval_chart(const FigureText& text, const IntervalChartOptions& options, std::vector<IntervalPoint> rows);

struct HeatMapOptions {
  std::string x_title;
  std::string y_title;
  int columns = 2;
};

/// Small multiples of heat maps over the same x and y bands, a colour scale and legend per panel.
Figure heat_map(const FigureText& text, const HeatMapOptions& options, std::vector<HeatCell> cells);

}  // namespace epsim::report
