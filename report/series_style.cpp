// SPDX-License-Identifier: Apache-2.0
#include "report/series_style.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>

namespace epsim::report {
namespace {

// Okabe-Ito: blue, vermillion, bluish green, reddish purple, orange, sky blue, black, yellow (yellow last:
// it is the palest on white).
constexpr std::array<const char*, 8> k_colours{"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                               "#E69F00", "#56B4E9", "#000000", "#F0E442"};

// Solid, dashed, dotted, dash-dot, long dash, dash-dot-dot (px).
const std::array<std::vector<int>, 6> k_dashes{std::vector<int>{},      std::vector<int>{8, 4},
                                               std::vector<int>{2, 3},  std::vector<int>{10, 3, 2, 3},
                                               std::vector<int>{16, 4}, std::vector<int>{10, 3, 2, 3, 2, 3}};

// A marker as polylines in the unit box (closed when the flag says so); the circle is drawn with arcs.
struct Outline {
  std::vector<std::vector<std::array<double, 2>>> lines;
  bool closed = true;
  bool circle = false;
};

const std::array<Outline, 7>& outlines() {
  static const std::array<Outline, 7> k{
      Outline{{}, true, true},                                                   // circle
      Outline{{{{-0.8, -0.8}, {0.8, -0.8}, {0.8, 0.8}, {-0.8, 0.8}}}, true},     // square
      Outline{{{{0.0, -1.0}, {0.95, 0.75}, {-0.95, 0.75}}}, true},               // triangle up
      Outline{{{{0.0, -1.0}, {0.85, 0.0}, {0.0, 1.0}, {-0.85, 0.0}}}, true},     // diamond
      Outline{{{{0.0, 1.0}, {0.95, -0.75}, {-0.95, -0.75}}}, true},              // triangle down
      Outline{{{{-0.8, -0.8}, {0.8, 0.8}}, {{-0.8, 0.8}, {0.8, -0.8}}}, false},  // x
      Outline{{{{-1.0, 0.0}, {1.0, 0.0}}, {{0.0, -1.0}, {0.0, 1.0}}}, false}};   // plus
  return k;
}

std::string num(double v) {
  const double r = std::round(v * 1000.0) / 1000.0;
  return fmt::format("{}", r == 0.0 ? 0.0 : r);
}

// The marker's path scaled by `scale` around (cx, 0).
std::string marker_path(std::size_t index, double scale, double cx) {
  const Outline& o = outlines()[index % outlines().size()];
  if (o.circle) {
    const std::string r = num(scale);
    return fmt::format("M{},0A{},{},0,1,1,{},0A{},{},0,1,1,{},0Z", num(cx + scale), r, r, num(cx - scale), r, r,
                       num(cx + scale));
  }
  std::string p;
  for (const auto& line : o.lines) {
    for (std::size_t i = 0; i < line.size(); ++i) {
      p += fmt::format("{}{},{}", i == 0 ? 'M' : 'L', num(cx + scale * line[i][0]), num(scale * line[i][1]));
    }
    if (o.closed) {
      p += 'Z';
    }
  }
  return p;
}

// The plot's marker size (Vega's symbol size, px squared); its half side in px is sqrt(size) / 2.
constexpr double k_marker_size = 50.0;

}  // namespace

double marker_size() {
  return k_marker_size;
}

std::size_t palette_colours() {
  return k_colours.size();
}
std::size_t palette_dashes() {
  return k_dashes.size();
}
std::size_t palette_markers() {
  return outlines().size();
}

SeriesStyle series_style(std::size_t index) {
  return {k_colours[index % k_colours.size()], k_dashes[index % k_dashes.size()], marker_path(index, 1.0, 0.0)};
}

std::string legend_symbol(std::size_t index, double size_px) {
  const double unit_px = size_px / 2.0;  // Vega scales a custom symbol's box by sqrt(symbolSize) / 2
  const double m = std::sqrt(k_marker_size) / 2.0 / unit_px;
  const double gap = m + 1.5 / unit_px;
  const std::vector<int>& dash = k_dashes[index % k_dashes.size()];
  std::string p;
  const auto segment = [&](double a, double b) {
    // The line, less the gap around the marker.
    const auto piece = [&](double lo, double hi) {
      if (hi - lo > 1e-9) {
        p += fmt::format("M{},0L{},0", num(lo), num(hi));
      }
    };
    piece(a, std::min(b, -gap));
    piece(std::max(a, gap), b);
  };
  if (dash.empty()) {
    segment(-1.0, 1.0);
  } else {
    double x = -1.0;
    for (std::size_t i = 0; x < 1.0; ++i) {
      const double len = dash[i % dash.size()] / unit_px;
      if (i % 2 == 0) {
        segment(x, std::min(1.0, x + len));
      }
      x += len;
    }
  }
  return p + marker_path(index, m, 0.0);
}

nlohmann::json series_scales(const std::vector<std::string>& series, double legend_symbol_px) {
  nlohmann::json colours = nlohmann::json::array();
  nlohmann::json dashes = nlohmann::json::array();
  nlohmann::json markers = nlohmann::json::array();
  nlohmann::json symbols = nlohmann::json::array();
  for (std::size_t i = 0; i < series.size(); ++i) {
    const SeriesStyle s = series_style(i);
    colours.push_back(s.colour);
    dashes.push_back(s.dash);
    markers.push_back(s.marker);
    symbols.push_back(legend_symbol(i, legend_symbol_px));
  }
  const auto scale = [&](const char* name, nlohmann::json range) {
    return nlohmann::json{{"name", name}, {"type", "ordinal"}, {"domain", series}, {"range", std::move(range)}};
  };
  return nlohmann::json::array(
      {scale("color", colours), scale("dash", dashes), scale("marker", markers), scale("legend_symbol", symbols)});
}

std::string single_colour() {
  return k_colours[0];
}

nlohmann::json event_colours() {
  return nlohmann::json::array({"#000000", "#CC79A7", "#E69F00", "#56B4E9", "#009E73"});
}

}  // namespace epsim::report
