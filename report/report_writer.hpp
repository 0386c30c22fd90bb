#pragma once
// Writes a report: REPORT.html and, in REPORT-figures/ beside it, each figure's SVG, the CSV of exactly
// what it plots and its Vega specification (ID.vg.json, to restyle it). Everything is rendered in memory
// first, so a failure (no Node.js, a Vega error) writes nothing; each file is written atomically.
#include <cstddef>
#include <filesystem>
#include <string>

#include "report/html_page.hpp"

namespace epsim::report {

struct WriteOptions {
  bool svg = true;   ///< also draw each figure's SVG (needs Node.js)
  std::string node;  ///< the Node.js program (svg_export.hpp: node_program())
};

struct WrittenReport {
  std::filesystem::path html;
  std::filesystem::path figures_dir;
  std::size_t figures = 0;
  std::size_t svgs = 0;
};

/// The figures directory of a report file: "out/report.html" -> "out/report-figures".
std::filesystem::path figures_dir_of(const std::filesystem::path& html);

WrittenReport write_report(const Report& report, const std::filesystem::path& html, const WriteOptions& options);

}  // namespace epsim::report
