// SPDX-License-Identifier: Apache-2.0
#pragma once
// Writes a report: REPORT.html and, in REPORT-figures/ beside it, each figure's SVG, the CSV of exactly
// what it plots and its Vega specification (ID.vg.json, to restyle it). Everything is rendered in memory
// first, so a failure (no Node.js, a Vega error) writes nothing. The figures folder is replaced as a unit
// (core/staged_directory.hpp) with the page renamed into place right after, signals deferred between, so
// an interrupted report never leaves new figures beside an old page; epsim's manifest in the folder
// lists the files it wrote, the only ones a later report replaces or removes (a user's own figures stay),
// and a folder that is a symbolic link, or a page path that is not a regular file, is refused.
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

/// Throws core::Error unless `html` can be written (absent or a regular file) and its figures folder is
/// absent or a real folder (not a symbolic link): checked before any work.
void check_report_target(const std::filesystem::path& html);

WrittenReport write_report(const Report& report, const std::filesystem::path& html, const WriteOptions& options);

}  // namespace epsim::report
