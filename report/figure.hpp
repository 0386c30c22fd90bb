// SPDX-License-Identifier: Apache-2.0
#pragma once
// One figure of a report: a Vega specification (data inlined) and a CSV of exactly the rows it plots.
// Figures are built from three chart families (vega_specs.hpp), whose rows are typed here.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace epsim::report {

struct Figure {
  std::string id;       ///< file stem of its SVG and CSV: [a-z0-9_-] only
  std::string title;    ///< heading in the report
  std::string caption;  ///< how to read it, what the bands mean, where the data came from
  nlohmann::json spec;  ///< the Vega specification
  std::string csv;      ///< the plotted rows
};

/// A point of a line (optionally with an interval band) in panel `panel`, series `series`.
struct LinePoint {
  std::string panel;
  std::string series;
  double x = 0.0;
  double y = 0.0;
  std::optional<double> lo;
  std::optional<double> hi;
};

/// A vertical marker across every panel of a line chart (a migration, a recalibration...).
struct Marker {
  double x = 0.0;
  std::string kind;
};

/// An estimate with its interval: a dot and a bar per category, in panel `panel`.
struct IntervalPoint {
  std::string panel;
  std::string category;
  double value = 0.0;
  std::optional<double> lo;
  std::optional<double> hi;
  bool lower_bound = false;  ///< censored: the true value is at least `value` (an open marker)
};

/// A cell of a heat map in panel `panel` (each panel has its own colour scale).
struct HeatCell {
  std::string panel;
  std::string x;
  std::string y;
  double value = 0.0;
};

/// Keeps `id` file-name safe: lower case letters, digits, '-' and '_'; anything else becomes '_'.
std::string figure_id(const std::string& raw);

/// A CSV number in shortest round-trip form (text cells: core::csv_quote).
std::string csv_number(double v);

}  // namespace epsim::report
