#include "report/vega_specs.hpp"

#include "core/csv_lines.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

namespace epsim::report {
namespace {

using nlohmann::json;

constexpr int k_panel_width = 300;
constexpr int k_panel_height = 190;

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
                 const std::string& name) {
  return json{
      {"type", "group"},
      {"name", "panel"},
      {"from", {{"facet", {{"name", name}, {"data", facet_data}, {"groupby", json::array({"panel", "order"})}}}}},
      {"sort", {{"field", "datum.order"}}},
      {"title", {{"text", {{"signal", "parent.panel"}}}, {"fontSize", 12}, {"anchor", "start"}}},
      {"encode", {{"enter", {{"width", {{"value", k_panel_width}}}, {"height", {{"value", k_panel_height}}}}}}},
      // A group's scales read "width"/"height" from signals of that group, not from its encoding.
      {"signals", json::array({{{"name", "width"}, {"update", std::to_string(k_panel_width)}},
                               {{"name", "height"}, {"update", std::to_string(k_panel_height)}}})},
      {"scales", scales},
      {"axes", axes},
      {"marks", marks}};
}

// The rows as Vega data (rows and markers) and as the figure's CSV; `bands` says whether any has an interval.
json line_data(const std::vector<LinePoint>& rows, const std::vector<std::string>& panels,
               const std::vector<Marker>& markers, std::string& csv, bool& bands) {
  json values = json::array();
  for (const auto& r : rows) {
    bands = bands || (r.lo.has_value() && r.hi.has_value());
    values.push_back({{"panel", r.panel},
                      {"order", index_of(panels, r.panel)},
                      {"series", r.series},
                      {"x", r.x},
                      {"y", r.y},
                      {"lo", optional_number(r.lo)},
                      {"hi", optional_number(r.hi)}});
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

// Band, line and (optionally) symbols of one series, drawn from the faceted "sdata".
json series_marks(const LineChartOptions& o, bool bands) {
  const std::string interpolate = o.step ? "step-after" : "linear";
  const json x{{"scale", "x"}, {"field", "x"}};
  const json y{{"scale", "y"}, {"field", "y"}};
  const json color{{"scale", "color"}, {"field", "series"}};
  json marks = json::array();
  if (bands) {
    marks.push_back({{"type", "area"},
                     {"from", {{"data", "sdata"}}},
                     {"encode",
                      {{"enter",
                        {{"x", x},
                         {"y", {{"scale", "y"}, {"field", "lo"}}},
                         {"y2", {{"scale", "y"}, {"field", "hi"}}},
                         {"defined", {{"signal", "isValid(datum.lo) && isValid(datum.hi)"}}},
                         {"interpolate", {{"value", interpolate}}},
                         {"fill", color},
                         {"fillOpacity", {{"value", 0.18}}}}}}}});
  }
  marks.push_back({{"type", "line"},
                   {"from", {{"data", "sdata"}}},
                   {"encode",
                    {{"enter",
                      {{"x", x},
                       {"y", y},
                       {"interpolate", {{"value", interpolate}}},
                       {"stroke", color},
                       {"strokeWidth", {{"value", 2}}}}}}}});
  if (o.points) {
    const std::string tooltip = "{'series': datum.series, 'x': datum.x, 'y': datum.y, 'ci95': [datum.lo, datum.hi]}";
    marks.push_back(
        {{"type", "symbol"},
         {"from", {{"data", "sdata"}}},
         {"encode",
          {{"enter",
            {{"x", x}, {"y", y}, {"size", {{"value", 30}}}, {"fill", color}, {"tooltip", {{"signal", tooltip}}}}}}}});
  }
  return marks;
}

// A panel's marks: its series, then the event markers across it and the dashed reference line.
json panel_marks(const LineChartOptions& o, bool bands, bool markers) {
  json marks = json::array({{{"type", "group"},
                             {"from", {{"facet", {{"name", "sdata"}, {"data", "pdata"}, {"groupby", "series"}}}}},
                             {"marks", series_marks(o, bands)}}});
  if (markers) {
    marks.push_back({{"type", "rule"},
                     {"from", {{"data", "markers"}}},
                     {"encode",
                      {{"enter",
                        {{"x", {{"scale", "x"}, {"field", "x"}}},
                         {"y", {{"value", 0}}},
                         {"y2", {{"field", {{"group", "height"}}}}},
                         {"stroke", {{"scale", "marker"}, {"field", "kind"}}},
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
  // Lines are drawn in data order: sort each (panel, series) by x, keeping panels in their given order.
  std::stable_sort(rows.begin(), rows.end(), [&](const LinePoint& a, const LinePoint& b) {
    const int pa = index_of(panels, a.panel);
    const int pb = index_of(panels, b.panel);
    if (pa != pb) {
      return pa < pb;
    }
    return a.series != b.series ? a.series < b.series : a.x < b.x;
  });
  Figure f{text.id, text.title, text.caption, {}, "panel,series,x,y,ci_low,ci_high\n"};
  bool bands = false;
  json spec = base_spec(text.title);
  spec["data"] = line_data(rows, panels, markers, f.csv, bands);
  const std::vector<std::string> series =
      distinct(rows, [](const LinePoint& r) -> const std::string& { return r.series; });
  spec["scales"] = json::array({{{"name", "color"}, {"type", "ordinal"}, {"domain", series}, {"range", "category"}}});
  const int columns = std::max(1, std::min(o.columns, static_cast<int>(panels.size())));
  spec["layout"] = {{"columns", columns}, {"padding", {{"row", 28}, {"column", 36}}}, {"bounds", "full"}};
  json legends = json::array();
  if (series.size() > 1) {
    legends.push_back({{"stroke", "color"}, {"title", o.series_title}, {"orient", "right"}, {"symbolType", "stroke"}});
  }
  if (!markers.empty()) {
    spec["scales"].push_back(
        {{"name", "marker"},
         {"type", "ordinal"},
         {"domain", distinct(markers, [](const Marker& m) -> const std::string& { return m.kind; })},
         {"range", json::array({"#7f7f7f", "#d62728", "#9467bd", "#8c564b", "#e377c2"})}});
    legends.push_back({{"stroke", "marker"}, {"title", "events"}, {"orient", "right"}, {"symbolType", "stroke"}});
  }
  spec["legends"] = legends;
  const json axes =
      json::array({{{"orient", "bottom"}, {"scale", "x"}, {"title", o.x_title}, {"grid", true}, {"tickCount", 6}},
                   {{"orient", "left"},
                    {"scale", "y"},
                    {"grid", true},
                    {"tickCount", 5},
                    {"title", o.y_title.empty() ? json{{"signal", "parent.panel"}} : json(o.y_title)}}});
  spec["marks"] = json::array(
      {panel_group(panel_scales(o, bands), axes, panel_marks(o, bands, !markers.empty()), "rows", "pdata")});
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
  const int band_px = 22;
  const int height = std::max(60, band_px * static_cast<int>(categories.size()));
  json spec = base_spec(text.title);
  spec["data"] = json::array({{{"name", "rows"}, {"values", values}}});
  spec["scales"] = json::array({{{"name", "cat"},
                                 {"type", "band"},
                                 {"domain", categories},
                                 {"range", json::array({0, height})},
                                 {"padding", 0.3}}});
  const int columns = std::max(1, std::min(o.columns, static_cast<int>(panels.size())));
  spec["layout"] = {{"columns", columns}, {"padding", {{"row", 28}, {"column", 36}}}, {"bounds", "full"}};
  json domain_fields = json::array({"value", "lo", "hi"});
  json x_scale{{"name", "x"},      {"type", "linear"}, {"domain", {{"data", "pdata"}, {"fields", domain_fields}}},
               {"range", "width"}, {"nice", true},     {"zero", o.reference_x.has_value()}};
  json axes = json::array({{{"orient", "bottom"},
                            {"scale", "x"},
                            {"grid", true},
                            {"tickCount", 6},
                            {"title", o.x_title.empty() ? json{{"signal", "parent.panel"}} : json(o.x_title)}},
                           {{"orient", "left"}, {"scale", "cat"}, {"title", o.category_title}, {"labelLimit", 220}}});
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
                       {"stroke", {{"value", "#4c78a8"}}},
                       {"strokeWidth", {{"value", 2}}}}}}}});
  marks.push_back({{"type", "symbol"},
                   {"from", {{"data", "pdata"}}},
                   {"encode",
                    {{"enter",
                      {{"x", {{"scale", "x"}, {"field", "value"}}},
                       {"y", {{"scale", "cat"}, {"field", "category"}, {"band", 0.5}}},
                       {"size", {{"signal", "datum.lower_bound ? 90 : 50"}}},
                       // A lower bound (censored) is an open triangle pointing right: "at least this".
                       {"shape", {{"signal", "datum.lower_bound ? 'triangle-right' : 'circle'"}}},
                       {"fill", {{"signal", "datum.lower_bound ? 'white' : '#4c78a8'"}}},
                       {"stroke", {{"value", "#4c78a8"}}},
                       {"strokeWidth", {{"value", 1.5}}},
                       {"tooltip",
                        {{"signal",
                          "{'category': datum.category, 'value': datum.value, 'interval': [datum.lo, datum.hi], "
                          "'lower bound': datum.lower_bound}"}}}}}}}});
  json group = {
      {"type", "group"},
      {"from", {{"facet", {{"name", "pdata"}, {"data", "rows"}, {"groupby", json::array({"panel", "order"})}}}}},
      {"sort", {{"field", "datum.order"}}},
      {"title", {{"text", {{"signal", "parent.panel"}}}, {"fontSize", 12}, {"anchor", "start"}}},
      {"encode", {{"enter", {{"width", {{"value", k_panel_width}}}, {"height", {{"value", height}}}}}}},
      {"signals", json::array({{{"name", "width"}, {"update", std::to_string(k_panel_width)}},
                               {{"name", "height"}, {"update", std::to_string(height)}}})},
      {"scales", json::array({x_scale})},
      {"axes", axes},
      {"marks", marks}};
  spec["marks"] = json::array({group});
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
  // Cells of at least 6 px, each map at least 300 x 240.
  const int width = std::max(300, 6 * static_cast<int>(xs.size()));
  const int height = std::max(240, 6 * static_cast<int>(ys.size()));
  json spec = base_spec(text.title);
  spec["data"] = json::array({{{"name", "cells"}, {"values", values}}});
  spec["scales"] = json::array(
      {{{"name", "x"}, {"type", "band"}, {"domain", xs}, {"range", json::array({0, width})}, {"padding", 0.04}},
       {{"name", "y"}, {"type", "band"}, {"domain", ys}, {"range", json::array({0, height})}, {"padding", 0.04}}});
  const int columns = std::max(1, std::min(o.columns, static_cast<int>(panels.size())));
  spec["layout"] = {{"columns", columns}, {"padding", {{"row", 28}, {"column", 36}}}, {"bounds", "full"}};
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
