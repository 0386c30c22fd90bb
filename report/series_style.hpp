// SPDX-License-Identifier: Apache-2.0
#pragma once
// How every figure tells its series apart: a colour-blind-safe categorical palette (Okabe and Ito,
// "Color Universal Design", 2008; Wong, Nature Methods 8:441, 2011) AND a dash pattern AND a hollow
// marker per series, so series stay distinguishable in greyscale, for colour-blind readers and where two
// of them coincide (the dashes and the outlines of different shapes show through one another). Series
// are styled by their position in the study's order, which the legend keeps. The one place figures get
// their series styles from (vega_specs.cpp).
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace epsim::report {

struct SeriesStyle {
  std::string colour;     ///< "#rrggbb"
  std::vector<int> dash;  ///< SVG stroke-dasharray in px; empty: solid
  std::string marker;     ///< SVG path of a hollow marker in Vega's symbol box [-1, 1] x [-1, 1]
};

/// The style of the series at position `index`. Colours cycle every 8, dashes every 6, markers every 7,
/// so the first 168 series differ in at least one of them and the first 6 in all three.
SeriesStyle series_style(std::size_t index);

/// Vega's symbol size (px squared) of the markers on lines.
double marker_size();

/// The number of colours, dashes and markers (the cycle lengths above).
std::size_t palette_colours();
std::size_t palette_dashes();
std::size_t palette_markers();

/// A legend symbol showing a series as drawn: a 2-unit line in its dash pattern (geometry, not a
/// stroke-dasharray, so the marker's outline stays solid) broken around its marker, in the symbol box
/// scaled to `size_px` pixels across (the legend's symbolSize is size_px squared).
std::string legend_symbol(std::size_t index, double size_px);

/// Vega ordinal scales over `series` (in the given order): "color", "dash", "marker" and "legend_symbol".
nlohmann::json series_scales(const std::vector<std::string>& series, double legend_symbol_px);

/// The colour of an estimate drawn on its own (interval charts): the palette's first.
std::string single_colour();

/// Colours of event kinds (vertical lines of a time series), from the palette's end so they differ
/// from the first series.
nlohmann::json event_colours();

}  // namespace epsim::report
