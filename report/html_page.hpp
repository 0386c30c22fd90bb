// SPDX-License-Identifier: Apache-2.0
#pragma once
// The report as one self-contained HTML page: sections of figures (Vega specifications drawn in the
// page by the inlined Vega), tables and configurations. A Content-Security-Policy forbids every fetch and
// every script but the page's own (by hash), so the page provably needs nothing but itself; a self-test line per figure
// (its number of drawn marks) lets a headless browser check it.
#include <string>
#include <vector>

#include "report/figure.hpp"

namespace epsim::report {

struct ReportSection {
  std::string id;  ///< anchor
  std::string heading;
  std::string intro_html;
  std::vector<Figure> figures;
  std::string tables_html;  ///< tables and configuration blocks, after the figures
};

struct Report {
  std::string title;
  std::string generator;  ///< e.g. "epsim 0.1.0"
  std::vector<std::string> inputs;
  std::vector<ReportSection> sections;
};

/// The page; figures link their SVG and CSV under `figures_dir` (relative to the page).
std::string html_page(const Report& report, const std::string& figures_dir);

/// A link to `path` (relative to the page) that cannot become a scheme: "./" and the path
/// percent-encoded but for RFC 3986's unreserved characters and '/'.
std::string relative_href(const std::string& path);

/// JSON text safe inside a <script> element: '<' escaped as \u003c (valid JSON, never "</script>").
std::string script_safe_json(const std::string& json_text);

}  // namespace epsim::report
