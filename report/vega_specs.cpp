// SPDX-License-Identifier: Apache-2.0
#include "report/vega_specs.hpp"

#include "core/csv_lines.hpp"
#include "report/series_style.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

namespace epsim::report {
namespace {

using nlohmann::json;

constexpr int k_panel_width = 270;
constexpr int k_panel_height = 190;
constexpr int k_min_panel_height = 110;
// Room a line panel needs besides its plot: the y axis (labels and title) to its left, the title above
// and the x axis below, and the padding between panels.
constexpr int k_y_axis_px = 75;
constexpr int k_panel_overhead_px = 80;
constexpr int k_column_gap_px = 30;
constexpr int k_row_gap_px = 28;
// Legend entries: the symbol (a line with its marker) and an estimate of a label's width in the 11 px
// font (an average glyph is about 6 px; 7 keeps the estimate on the safe side).
constexpr double k_legend_symbol_px = 28.0;
constexpr int k_legend_char_px = 7;
constexpr int k_legend_row_px = 30;

// How many panels of `panel_px` (plus `extra_px` each) fit across the figure, at most `wanted` and `panels`.
int fitting_columns(int wanted, std::size_t panels, int panel_px, int extra_px) {
  const int fit = (k_figure_max_width_px + k_column_gap_px) / (panel_px + extra_px + k_column_gap_px);
  return std::max(1, std::min({wanted, static_cast<int>(panels), fit}));
}

int rows_of(std::size_t panels, int columns) {
  return (static_cast<int>(panels) + columns - 1) / columns;
}

// A legend at the bottom, its entries in the series' order on as many columns as fit the figure's width;
// labels are never truncated short of the whole width.
json series_legend(const std::vector<std::string>& series, const std::string& title, int& height_px) {
  std::size_t longest = 0;
  for (const std::string& s : series) {
    longest = std::max(longest, s.size());
  }
  const int entry_px = static_cast<int>(k_legend_symbol_px) + 24 + k_legend_char_px * static_cast<int>(longest);
  const int columns = std::max(1, std::min(static_cast<int>(series.size()), k_figure_max_width_px / entry_px));
  height_px = (title.empty() ? 0 : 20) + k_legend_row_px * rows_of(series.size(), columns);
  return {{"stroke", "color"},
          {"title", title},
          {"orient", "bottom"},
          {"direction", "horizontal"},
          {"columns", columns},
          {"columnPadding", 18},
          {"rowPadding", 2},
          {"symbolSize", k_legend_symbol_px * k_legend_symbol_px},
          {"labelLimit", k_figure_max_width_px - 60},
          {"encode",
           {{"symbols",
             {{"update",
               {{"shape", {{"scale", "legend_symbol"}, {"field", "value"}}},
                {"stroke", {{"scale", "color"}, {"field", "value"}}},
                {"strokeWidth", {{"value", 1.8}}},
                {"fill", {{"value", "transparent"}}}}}}}}}};
}

json base_spec(const std::string& title) {
  return json{{"$schema", "https://vega.github.io/schema/vega/v5.json"},
              {"description", title},
              {"padding", 8},
              {"autosize", "pad"},
              {"background", "white"},
              {"config",
               {{"axis", {{"labelFontSize", 11}, {"titleFontSize", 12}, {"gridColor", "#e6e6e6"}}},
                {"legend", {{"labelFontSize", 11}, {"titleFontSize", 12}, {"labelLimit", 260}}}}}};
}

json optional_number(const std::optional<double>& v) {
  return v.has_value() && std::isfinite(*v) ? json(*v) : json(nullptr);
}

// The distinct values of `field` over `items`, in order of first appearance (the order the builders chose).
template <typename T, typename Field>
std::vector<std::string> distinct(const std::vector<T>& items, Field field) {
  std::vector<std::string> out;
  for (const T& item : items) {
    const std::string& v = field(item);
    if (std::find(out.begin(), out.end(), v) == out.end()) {
      out.push_back(v);
    }
  }
  return out;
}

int index_of(const std::vector<std::string>& v, const std::string& s) {
  return static_cast<int>(std::find(v.begin(), v.end(), s) - v.begin());
}

json panel_group(const json& scales, const json& axes, const json& marks, const std::string& facet_data,
                 const std::string& name, int panel_height) {
  return json{
      {"type", "group"},
      {"name", "panel"},
      {"from", {{"facet", {{"name", name}, {"data", facet_data}, {"groupby", json::array({"panel", "order"})}}}}},
      {"sort", {{"field", "datum.order"}}},
      {"title", {{"text", {{"signal", "parent.panel"}}}, {"fontSize", 12}, {"anchor", "start"}}},
      {"encode", {{"enter", {{"width", {{"value", k_panel_width}}}, {"height", {{"value", panel_height}}}}}}},
      // A group's scales read "width"/"height" from signals of that group, not from its encoding.
      {"signals", json::array({{{"name", "width"}, {"update", std::to_string(k_panel_width)}},
                               {{"name", "height"}, {"update", std::to_string(panel_height)}}})},
      {"scales", scales},
      {"axes", axes},
      {"marks", marks}};
}

// The rows as Vega data (rows and markers) and as the figure's CSV; `bands` says whether any has an interval.
// `marked[i]`: row i carries its series' marker.
json line_data(const std::vector<LinePoint>& rows, const std::vector<std::string>& panels,
               const std::vector<bool>& marked, const std::vector<Marker>& markers, std::string& csv, bool& bands) {
  json values = json::array();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const LinePoint& r = rows[i];
    bands = bands || (r.lo.has_value() && r.hi.has_value());
    values.push_back({{"panel", r.panel},
                      {"order", index_of(panels, r.panel)},
                      {"series", r.series},
                      {"x", r.x},
                      {"y", r.y},
                      {"lo", optional_number(r.lo)},
                      {"hi", optional_number(r.hi)},
                      {"mark", marked[i]}});
    csv += core::csv_quote(r.panel) + ',' + core::csv_quote(r.series) + ',' + csv_number(r.x) + ',' + csv_number(r.y) +
           ',' + (r.lo.has_value() ? csv_number(*r.lo) : "") + ',' + (r.hi.has_value() ? csv_number(*r.hi) : "") + '\n';
  }
  json marker_values = json::array();
  for (const auto& m : markers) {
    marker_values.push_back({{"x", m.x}, {"kind", m.kind}});
    csv += "(all panels)," + core::csv_quote(m.kind) + ',' + csv_number(m.x) + ",,,\n";
  }
  return json::array({{{"name", "rows"}, {"values", values}}, {{"name", "markers"}, {"values", marker_values}}});
}

// Band, line and markers of one series, drawn from the faceted "sdata": its colour, dash and marker
// (series_style.hpp), markers hollow so coinciding series show through one another. Bands fade as
// series add up, so that overlapping bands do not hide the lines.
json series_marks(const LineChartOptions& o, bool bands, std::size_t n_series) {
  const std::string interpolate = o.step ? "step-after" : "linear";
  const json x{{"scale", "x"}, {"field", "x"}};
  const json y{{"scale", "y"}, {"field", "y"}};
  const json color{{"scale", "color"}, {"field", "series"}};
  json marks = json::array();
  if (bands) {
    marks.push_back(
        {{"type", "area"},
         {"from", {{"data", "sdata"}}},
         {"encode",
          {{"enter",
            {{"x", x},
             {"y", {{"scale", "y"}, {"field", "lo"}}},
             {"y2", {{"scale", "y"}, {"field", "hi"}}},
             {"defined", {{"signal", "isValid(datum.lo) && isValid(datum.hi)"}}},
             {"interpolate", {{"value", interpolate}}},
             {"fill", color},
             {"fillOpacity",
              {{"value", std::clamp(0.4 / static_cast<double>(std::max<std::size_t>(1, n_series)), 0.06, 0.15)}}}}}}}});
  }
  marks.push_back({{"type", "line"},
                   {"from", {{"data", "sdata"}}},
                   {"encode",
                    {{"enter",
                      {{"x", x},
                       {"y", y},
                       {"interpolate", {{"value", interpolate}}},
                       {"stroke", color},
                       {"strokeDash", {{"scale", "dash"}, {"field", "series"}}},
                       {"strokeWidth", {{"value", 2}}}}}}}});
  const std::string tooltip = "{'series': datum.series, 'x': datum.x, 'y': datum.y, 'ci95': [datum.lo, datum.hi]}";
  marks.push_back({{"type", "symbol"},
                   {"from", {{"data", "smarks"}}},
                   {"encode",
                    {{"enter",
                      {{"x", x},
                       {"y", y},
                       {"shape", {{"scale", "marker"}, {"field", "series"}}},
                       {"size", {{"value", marker_size()}}},
                       {"stroke", color},
                       {"strokeWidth", {{"value", 1.6}}},
                       {"fill", {{"value", "transparent"}}},
                       {"tooltip", {{"signal", tooltip}}}}}}}});
  return marks;
}

// A panel's marks: its series, then the event markers across it and the dashed reference line.
json panel_marks(const LineChartOptions& o, bool bands, bool markers, std::size_t n_series) {
  json marks = json::array(
      {{{"type", "group"},
        {"from", {{"facet", {{"name", "sdata"}, {"data", "pdata"}, {"groupby", "series"}}}}},
        {"data", json::array({{{"name", "smarks"},
                               {"source", "sdata"},
                               {"transform", json::array({{{"type", "filter"}, {"expr", "datum.mark"}}})}}})},
        {"marks", series_marks(o, bands, n_series)}}});
  if (markers) {
    marks.push_back({{"type", "rule"},
                     {"from", {{"data", "markers"}}},
                     {"encode",
                      {{"enter",
                        {{"x", {{"scale", "x"}, {"field", "x"}}},
                         {"y", {{"value", 0}}},
                         {"y2", {{"field", {{"group", "height"}}}}},
                         {"stroke", {{"scale", "event"}, {"field", "kind"}}},
                         {"strokeOpacity", {{"value", 0.6}}},
                         {"tooltip", {{"signal", "datum.kind + ' at ' + format(datum.x, '.3f')"}}}}}}}});
  }
  if (o.reference_y.has_value()) {
    marks.push_back({{"type", "rule"},
                     {"encode",
                      {{"enter",
                        {{"x", {{"value", 0}}},
                         {"x2", {{"field", {{"group", "width"}}}}},
                         {"y", {{"scale", "y"}, {"value", *o.reference_y}}},
                         {"stroke", {{"value", "#444"}}},
                         {"strokeDash", {{"value", json::array({4, 4})}}},
                         {"tooltip", {{"value", o.reference_label}}}}}}}});
  }
  return marks;
}

// Each panel scales its own x and y (TTFT and E2E differ by orders of magnitude), unless y is fixed.
json panel_scales(const LineChartOptions& o, bool bands) {
  const bool fixed_y = o.y_min.has_value() && o.y_max.has_value();
  json x_scale{{"name", "x"},
               {"type", o.x_log ? "log" : "linear"},
               {"domain", {{"data", "pdata"}, {"field", "x"}}},
               {"range", "width"},
               {"nice", true},
               {"zero", false}};
  json y_domain =
      fixed_y ? json::array({o.y_min.value_or(0.0), o.y_max.value_or(1.0)})
              : json{{"data", "pdata"}, {"fields", bands ? json::array({"y", "lo", "hi"}) : json::array({"y"})}};
  json y_scale{{"name", "y"}, {"type", "linear"}, {"domain", y_domain}, {"range", "height"}, {"zero", false}};
  if (!fixed_y) {
    y_scale["nice"] = true;
  }
  return json::array({x_scale, y_scale});
}

}  // namespace

LineChartOptions cdf_options(const std::string& y_title, const std::string& series_title) {
  LineChartOptions o;
  o.y_title = y_title;
  o.series_title = series_title;
  o.step = true;
  o.y_min = 0.0;
  o.y_max = 1.0;
  return o;
}

Figure line_chart(const FigureText& text, const LineChartOptions& o, std::vector<LinePoint> rows,
                  const std::vector<Marker>& markers) {
  // A metric a run could not measure (NaN, e.g. TPOT without a multi-token request) is not a point.
  std::erase_if(rows, [](const LinePoint& r) { return !std::isfinite(r.x) || !std::isfinite(r.y); });
  const std::vector<std::string> panels =
      distinct(rows, [](const LinePoint& r) -> const std::string& { return r.panel; });
  // Series keep the order the builders gave them (the study's axis order), never the alphabet's.
  const std::vector<std::string> series =
      distinct(rows, [](const LinePoint& r) -> const std::string& { return r.series; });
  // Lines are drawn in data order: sort each (panel, series) by x, keeping panels and series in order.
  std::stable_sort(rows.begin(), rows.end(), [&](const LinePoint& a, const LinePoint& b) {
    const int pa = index_of(panels, a.panel);
    const int pb = index_of(panels, b.panel);
    if (pa != pb) {
      return pa < pb;
    }
    const int sa = index_of(series, a.series);
    const int sb = index_of(series, b.series);
    return sa != sb ? sa < sb : a.x < b.x;
  });
  // Markers: on every point of a sparse curve, else about six per curve, each series shifted along its
  // curve so the markers of coinciding series fall on different points.
  std::vector<bool> marked(rows.size(), o.points);
  if (!o.points) {
    for (std::size_t begin = 0; begin < rows.size();) {
      std::size_t end = begin;
      while (end < rows.size() && rows[end].panel == rows[begin].panel && rows[end].series == rows[begin].series) {
        ++end;
      }
      const std::size_t n = end - begin;
      const std::size_t stride = std::max<std::size_t>(1, n / 6);
      const std::size_t phase = static_cast<std::size_t>(index_of(series, rows[begin].series)) * stride /
                                std::max<std::size_t>(1, series.size());
      for (std::size_t i = 0; i < n; ++i) {
        marked[begin + i] = i % stride == phase;
      }
      begin = end;
    }
  }
  Figure f{text.id, text.title, text.caption, {}, "panel,series,x,y,ci_low,ci_high\n"};
  bool bands = false;
  json spec = base_spec(text.title);
  spec["data"] = line_data(rows, panels, marked, markers, f.csv, bands);
  spec["scales"] = series_scales(series, k_legend_symbol_px);
  json legends = json::array();
  int legend_px = 0;
  if (series.size() > 1) {
    legends.push_back(series_legend(series, o.series_title, legend_px));
  }
  if (!markers.empty()) {
    const auto kinds = distinct(markers, [](const Marker& m) -> const std::string& { return m.kind; });
    spec["scales"].push_back({{"name", "event"}, {"type", "ordinal"}, {"domain", kinds}, {"range", event_colours()}});
    legends.push_back({{"stroke", "event"},
                       {"title", "events"},
                       {"orient", "bottom"},
                       {"direction", "horizontal"},
                       {"symbolType", "stroke"},
                       {"labelLimit", k_figure_max_width_px - 60}});
    legend_px += 40;
  }
  spec["legends"] = legends;
  // Columns that fit the width; panels lower (down to k_min_panel_height) before the figure outgrows
  // the height.
  const int columns = fitting_columns(o.columns, panels.size(), k_panel_width, k_y_axis_px);
  const int rows_n = rows_of(panels.size(), columns);
  const int panel_height = std::clamp((k_figure_max_height_px - legend_px) / rows_n - k_panel_overhead_px,
                                      k_min_panel_height, k_panel_height);
  spec["layout"] = {
      {"columns", columns}, {"padding", {{"row", k_row_gap_px}, {"column", k_column_gap_px}}}, {"bounds", "full"}};
  const json axes = json::array({{{"orient", "bottom"},
                                  {"scale", "x"},
                                  {"title", o.x_title},
                                  {"grid", true},
                                  {"tickCount", 6},
                                  {"labelOverlap", true}},
                                 {{"orient", "left"},
                                  {"scale", "y"},
                                  {"grid", true},
                                  {"tickCount", 5},
                                  {"labelOverlap", true},
                                  {"title", o.y_title.empty() ? json{{"signal", "parent.panel"}} : json(o.y_title)}}});
  spec["marks"] =
      json::array({panel_group(panel_scales(o, bands), axes, panel_marks(o, bands, !markers.empty(), series.size()),
                               "rows", "pdata", panel_height)});
  f.spec = std::move(spec);
  return f;
}

Figure interval_chart(const FigureText& text, const IntervalChartOptions& o, std::vector<IntervalPoint> rows) {
  std::erase_if(rows, [](const IntervalPoint& r) { return !std::isfinite(r.value); });
  const auto panels = distinct(rows, [](const IntervalPoint& r) -> const std::string& { return r.panel; });
  const auto categories = distinct(rows, [](const IntervalPoint& r) -> const std::string& { return r.category; });
  json values = json::array();
  Figure f{text.id, text.title, text.caption, {}, "panel,category,value,ci_low,ci_high,lower_bound\n"};
  for (const auto& r : rows) {
    values.push_back({{"panel", r.panel},
                      {"order", index_of(panels, r.panel)},
                      {"category", r.category},
                      {"value", r.value},
                      {"lo", optional_number(r.lo)},
                      {"hi", optional_number(r.hi)},
                      {"lower_bound", r.lower_bound}});
    f.csv += core::csv_quote(r.panel) + ',' + core::csv_quote(r.category) + ',' + csv_number(r.value) + ',' +
             (r.lo.has_value() ? csv_number(*r.lo) : "") + ',' + (r.hi.has_value() ? csv_number(*r.hi) : "") + ',' +
             (r.lower_bound ? "1" : "0") + '\n';
  }
  // Panels on a grid of as many columns as fit, the category labels once per row (left of its first
  // panel); bands shrink from 22 to 12 px before the figure outgrows k_figure_max_height_px.
  std::size_t longest = 0;
  for (const std::string& c : categories) {
    longest = std::max(longest, c.size());
  }
  const int label_px = std::min(260, k_legend_char_px * static_cast<int>(longest) + 16);
  const int panel_px = 230;
  const int gap_px = 28;
  const int row_overhead_px = 84;  // panel title, x axis labels and title, gap to the next row
  const int columns = std::max(1, std::min({o.columns, static_cast<int>(panels.size()),
                                            (k_figure_max_width_px - label_px + gap_px) / (panel_px + gap_px)}));
  const int rows_n = rows_of(panels.size(), columns);
  const int n_categories = std::max(1, static_cast<int>(categories.size()));
  const int band_px = std::clamp((k_figure_max_height_px - rows_n * row_overhead_px) / (rows_n * n_categories), 12, 22);
  const int height = std::max(40, band_px * n_categories);
  json spec = base_spec(text.title);
  spec["data"] = json::array(
      {{{"name", "rows"}, {"values", values}},
       {{"name", "first"},
        {"source", "rows"},
        {"transform", json::array({{{"type", "filter"}, {"expr", fmt::format("datum.order % {} === 0", columns)}}})}},
       {{"name", "rest"},
        {"source", "rows"},
        {"transform", json::array({{{"type", "filter"}, {"expr", fmt::format("datum.order % {} !== 0", columns)}}})}}});
  spec["scales"] = json::array({{{"name", "cat"},
                                 {"type", "band"},
                                 {"domain", categories},
                                 {"range", json::array({0, height})},
                                 {"padding", 0.3}}});
  json domain_fields = json::array({"value", "lo", "hi"});
  json x_scale{{"name", "x"},      {"type", "linear"}, {"domain", {{"data", "pdata"}, {"fields", domain_fields}}},
               {"range", "width"}, {"nice", true},     {"zero", o.reference_x.has_value()}};
  // Narrow panels: labels that would overlap (wide numbers) are thinned out.
  const json x_axis{
      {"orient", "bottom"},   {"scale", "x"},
      {"grid", true},         {"tickCount", 5},
      {"labelOverlap", true}, {"title", o.x_title.empty() ? json{{"signal", "parent.panel"}} : json(o.x_title)}};
  // Every panel draws the category grid lines; the first of a row also its labels.
  const json cat_grid{{"orient", "left"}, {"scale", "cat"},  {"grid", true},        {"labels", false},
                      {"ticks", false},   {"domain", false}, {"bandPosition", 0.5}, {"gridColor", "#f0f0f0"}};
  const json cat_labels{{"orient", "left"},
                        {"scale", "cat"},
                        {"title", o.category_title},
                        {"labelLimit", label_px},
                        {"labelFontSize", band_px < 16 ? 10 : 11}};
  json marks = json::array();
  if (o.reference_x.has_value()) {
    marks.push_back({{"type", "rule"},
                     {"encode",
                      {{"enter",
                        {{"x", {{"scale", "x"}, {"value", *o.reference_x}}},
                         {"y", {{"value", 0}}},
                         {"y2", {{"field", {{"group", "height"}}}}},
                         {"stroke", {{"value", "#444"}}},
                         {"strokeDash", {{"value", json::array({4, 4})}}}}}}}});
  }
  marks.push_back({{"type", "rule"},
                   {"from", {{"data", "pdata"}}},
                   {"encode",
                    {{"enter",
                      {{"x", {{"scale", "x"}, {"signal", "isValid(datum.lo) ? datum.lo : datum.value"}}},
                       {"x2", {{"scale", "x"}, {"signal", "isValid(datum.hi) ? datum.hi : datum.value"}}},
                       {"y", {{"scale", "cat"}, {"field", "category"}, {"band", 0.5}}},
                       {"stroke", {{"value", single_colour()}}},
                       {"strokeWidth", {{"value", 2}}}}}}}});
  marks.push_back(
      {{"type", "symbol"},
       {"from", {{"data", "pdata"}}},
       {"encode",
        {{"enter",
          {{"x", {{"scale", "x"}, {"field", "value"}}},
           {"y", {{"scale", "cat"}, {"field", "category"}, {"band", 0.5}}},
           {"size",
            {{"signal", fmt::format("datum.lower_bound ? {} : {}", band_px < 16 ? 60 : 90, band_px < 16 ? 30 : 50)}}},
           // A lower bound (censored) is an open triangle pointing right: "at least this".
           {"shape", {{"signal", "datum.lower_bound ? 'triangle-right' : 'circle'"}}},
           {"fill", {{"signal", fmt::format("datum.lower_bound ? 'white' : '{}'", single_colour())}}},
           {"stroke", {{"value", single_colour()}}},
           {"strokeWidth", {{"value", 1.5}}},
           {"tooltip",
            {{"signal",
              "{'category': datum.category, 'value': datum.value, 'interval': [datum.lo, datum.hi], "
              "'lower bound': datum.lower_bound}"}}}}}}}});
  const auto group = [&](const char* data, bool labels) {
    json axes = json::array({x_axis, cat_grid});
    if (labels) {
      axes.push_back(cat_labels);
    }
    return json{
        {"type", "group"},
        {"from", {{"facet", {{"name", "pdata"}, {"data", data}, {"groupby", json::array({"panel", "order"})}}}}},
        {"sort", {{"field", "datum.order"}}},
        {"title", {{"text", {{"signal", "parent.panel"}}}, {"fontSize", 12}, {"anchor", "start"}}},
        {"encode",
         {{"enter",
           {{"x", {{"signal", fmt::format("(datum.order % {}) * {}", columns, panel_px + gap_px)}}},
            {"y", {{"signal", fmt::format("floor(datum.order / {}) * {}", columns, height + row_overhead_px)}}},
            {"width", {{"value", panel_px}}},
            {"height", {{"value", height}}}}}}},
        {"signals", json::array({{{"name", "width"}, {"update", std::to_string(panel_px)}},
                                 {{"name", "height"}, {"update", std::to_string(height)}}})},
        {"scales", json::array({x_scale})},
        {"axes", axes},
        {"marks", marks}};
  };
  spec["marks"] = json::array({group("first", true), group("rest", false)});
  f.spec = std::move(spec);
  return f;
}

Figure heat_map(const FigureText& text, const HeatMapOptions& o, std::vector<HeatCell> cells) {
  std::erase_if(cells, [](const HeatCell& c) { return !std::isfinite(c.value); });
  const auto panels = distinct(cells, [](const HeatCell& c) -> const std::string& { return c.panel; });
  const auto xs = distinct(cells, [](const HeatCell& c) -> const std::string& { return c.x; });
  const auto ys = distinct(cells, [](const HeatCell& c) -> const std::string& { return c.y; });
  json values = json::array();
  Figure f{text.id, text.title, text.caption, {}, "panel,x,y,value\n"};
  for (const auto& c : cells) {
    values.push_back(
        {{"panel", c.panel}, {"order", index_of(panels, c.panel)}, {"x", c.x}, {"y", c.y}, {"value", c.value}});
    f.csv += core::csv_quote(c.panel) + ',' + core::csv_quote(c.x) + ',' + core::csv_quote(c.y) + ',' +
             csv_number(c.value) + '\n';
  }
  // Cells of 6 px, each map 300-380 x 240-420 px (smaller cells past that, labels thinned below): two maps
  // with their axes and colour legends fit the figure's width.
  const int width = std::clamp(6 * static_cast<int>(xs.size()), 300, 380);
  const int height = std::clamp(6 * static_cast<int>(ys.size()), 240, 420);
  json spec = base_spec(text.title);
  spec["data"] = json::array({{{"name", "cells"}, {"values", values}}});
  spec["scales"] = json::array(
      {{{"name", "x"}, {"type", "band"}, {"domain", xs}, {"range", json::array({0, width})}, {"padding", 0.04}},
       {{"name", "y"}, {"type", "band"}, {"domain", ys}, {"range", json::array({0, height})}, {"padding", 0.04}}});
  const int columns = fitting_columns(o.columns, panels.size(), width, 130);
  spec["layout"] = {
      {"columns", columns}, {"padding", {{"row", k_row_gap_px}, {"column", k_column_gap_px}}}, {"bounds", "full"}};
  // Label every n-th band so labels never overlap (14 px per label).
  const auto every = [](std::size_t n, int px) {
    return std::max<std::size_t>(1, n * 14 / static_cast<std::size_t>(px) + 1);
  };
  const auto label_opacity = [](const char* scale, std::size_t n) {
    return json{{"labels",
                 {{"update",
                   {{"opacity",
                     {{"signal", fmt::format("indexof(domain('{}'), datum.value) % {} === 0 ? 1 : 0", scale, n)}}}}}}}};
  };
  const json axes = json::array({{{"orient", "bottom"},
                                  {"scale", "x"},
                                  {"title", o.x_title},
                                  {"encode", label_opacity("x", every(xs.size(), width))}},
                                 {{"orient", "left"},
                                  {"scale", "y"},
                                  {"title", o.y_title},
                                  {"encode", label_opacity("y", every(ys.size(), height))}}});
  const json color{{"name", "color"},
                   {"type", "linear"},
                   {"domain", {{"data", "pcells"}, {"field", "value"}}},
                   {"range", {{"scheme", "viridis"}}},
                   {"zero", true}};
  const json rect{{"type", "rect"},
                  {"from", {{"data", "pcells"}}},
                  {"encode",
                   {{"enter",
                     {{"x", {{"scale", "x"}, {"field", "x"}}},
                      {"width", {{"scale", "x"}, {"band", 1}}},
                      {"y", {{"scale", "y"}, {"field", "y"}}},
                      {"height", {{"scale", "y"}, {"band", 1}}},
                      {"fill", {{"scale", "color"}, {"field", "value"}}},
                      {"tooltip",
                       {{"signal", fmt::format("{{'{}': datum.x, '{}': datum.y, 'value': datum.value}}", o.x_title,
                                               o.y_title)}}}}}}}};
  spec["marks"] = json::array(
      {{{"type", "group"},
        {"from", {{"facet", {{"name", "pcells"}, {"data", "cells"}, {"groupby", json::array({"panel", "order"})}}}}},
        {"sort", {{"field", "datum.order"}}},
        {"title", {{"text", {{"signal", "parent.panel"}}}, {"fontSize", 12}, {"anchor", "start"}}},
        {"encode", {{"enter", {{"width", {{"value", width}}}, {"height", {{"value", height}}}}}}},
        {"scales", json::array({color})},
        {"axes", axes},
        {"legends", json::array({{{"fill", "color"}, {"type", "gradient"}, {"orient", "right"}}})},
        {"marks", json::array({rect})}}});
  f.spec = std::move(spec);
  return f;
}

}  // namespace epsim::report
