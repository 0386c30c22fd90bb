// SPDX-License-Identifier: Apache-2.0
#include "report/html_page.hpp"

#include <fmt/format.h>

#include "report/sha256.hpp"
#include "report/tables.hpp"
#include "report/vega_runtime.hpp"

namespace epsim::report {
namespace {

constexpr std::string_view k_style = R"css(
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #222; margin: 0; }
header { background: #1f3b57; color: #fff; padding: 18px 32px; }
header h1 { margin: 0 0 4px; font-size: 22px; }
header p { margin: 0; opacity: 0.85; }
nav { padding: 10px 32px; background: #f3f5f7; border-bottom: 1px solid #dde2e7; }
nav a { margin-right: 14px; color: #1f5d8c; text-decoration: none; }
main { padding: 8px 32px 40px; max-width: 1500px; }
.table-wrap { overflow-x: auto; max-width: 100%; }
section { margin-top: 26px; }
h2 { border-bottom: 2px solid #1f3b57; padding-bottom: 4px; }
figure { margin: 18px 0 28px; padding: 12px 14px; border: 1px solid #e3e7eb; border-radius: 6px; }
figure h3 { margin: 0 0 8px; font-size: 16px; }
figcaption { color: #555; max-width: 1000px; margin-top: 6px; }
figcaption a { color: #1f5d8c; }
.vega { overflow-x: auto; }
table { border-collapse: collapse; margin: 10px 0 18px; font-size: 12.5px; }
th, td { border: 1px solid #dde2e7; padding: 3px 7px; text-align: right; white-space: nowrap; }
th { background: #f3f5f7; }
td:first-child, th:first-child, td.text { text-align: left; }
.ci { color: #777; }
.note { color: #666; }
.note.warn { color: #7a4100; background: #fff3df; border-left: 3px solid #e69f00; padding: 4px 8px; }
.limits { border-left: 4px solid #b35900; background: #fff6ec; padding: 2px 12px; margin: 10px 0; }
pre { background: #f7f8fa; padding: 10px; overflow-x: auto; font-size: 12px; }
#epsim-selftest { display: none; }
)css";

// Draws every figure, then writes one line per figure into #epsim-selftest and "done"; a failure writes
// "error ...". A line says what a reader sees at this window's width: "figure ID marks N width W height
// H scroll S legend L hidden K": the marks drawn, the drawn size in px, how far the card scrolls
// sideways, the legend entries and how many of them are cut (truncated, or outside the card). A headless
// browser reads these lines (scripts/check-report-in-browser.sh, docs/reports.md).
constexpr std::string_view k_driver = R"js(
(function () {
  var out = document.getElementById("epsim-selftest");
  var lines = [];
  window.addEventListener("error", function (e) { lines.push("error " + e.message); out.textContent = lines.join("\n"); });
  var vega = __epsimVega();
  var specs = JSON.parse(document.getElementById("epsim-specs").textContent);
  var ids = Object.keys(specs);
  function measure(id) {
    var el = document.getElementById("view-" + id);
    var box = el.getBoundingClientRect();
    var svg = el.querySelector("svg");
    var size = svg ? svg.getBoundingClientRect() : box;
    var labels = el.querySelectorAll(".role-legend-label text");
    var hidden = 0;
    labels.forEach(function (t) {
      var r = t.getBoundingClientRect();
      var cut = /\u2026$/.test(t.textContent) || r.right > box.right + 0.5 || r.left < box.left - 0.5 ||
                r.bottom > box.bottom + 0.5 || r.top < box.top - 0.5;
      if (cut) hidden++;
    });
    return "figure " + id + " marks " + el.querySelectorAll("g.role-mark > *").length + " width " +
           Math.round(size.width) + " height " + Math.round(size.height) + " scroll " +
           Math.max(0, el.scrollWidth - el.clientWidth) + " legend " + labels.length + " hidden " + hidden;
  }
  Promise.all(ids.map(function (id) {
    var el = document.getElementById("view-" + id);
    var view = new vega.View(vega.parse(specs[id]), { renderer: "svg", container: el, hover: true });
    return view.runAsync();
  })).then(function () {
    ids.forEach(function (id) { lines.push(measure(id)); });
    var page = document.documentElement;
    lines.push("page width " + page.clientWidth + " scroll " + Math.max(0, page.scrollWidth - page.clientWidth));
    lines.push("done");
    out.textContent = lines.join("\n");
  }).catch(function (e) {
    lines.push("error " + e);
    out.textContent = lines.join("\n");
    console.error(e);
  });
})();
)js";

}  // namespace

// "./" then the path percent-encoded but for unreserved characters and '/' (RFC 3986): a report named
// "javascript:x.html" or "r-10:00.html" links its figures as "./javascript%3Ax-figures/...", a relative
// path that no browser reads as a scheme.
std::string relative_href(const std::string& path) {
  std::string out = "./";
  for (const char ch : path) {
    const auto c = static_cast<unsigned char>(ch);
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                      c == '.' || c == '_' || c == '~' || c == '/';
    out += keep ? std::string(1, ch) : fmt::format("%{:02X}", c);
  }
  return out;
}

std::string script_safe_json(const std::string& json_text) {
  std::string out;
  out.reserve(json_text.size());
  for (const char c : json_text) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

std::string html_page(const Report& report, const std::string& figures_dir) {
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  // Nothing may be fetched, and only the page's own script and style run: each allowed by its hash, so
  // no other inline script (a javascript: link included) does. Vega compiles its expressions with
  // Function() ('unsafe-eval').
  const std::string runtime = "\n" + vega_runtime_js();
  h += fmt::format(
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src {} {} 'unsafe-eval'; "
      "style-src {}; img-src data:\">\n",
      csp_hash_source(runtime), csp_hash_source(k_driver), csp_hash_source(k_style));
  h += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  h += "<title>" + html_escape(report.title) + "</title>\n<style>";
  h += k_style;
  h += "</style>\n</head>\n<body>\n<header><h1>" + html_escape(report.title) + "</h1><p>";
  std::string inputs;
  for (const auto& i : report.inputs) {
    inputs += (inputs.empty() ? "" : ", ") + html_escape(i);
  }
  h += fmt::format("{} &middot; from {}", html_escape(report.generator), inputs);
  h += "</p></header>\n<nav>";
  for (const ReportSection& s : report.sections) {
    h += fmt::format("<a href=\"#{}\">{}</a>", html_escape(s.id), html_escape(s.heading));
  }
  h += "</nav>\n<main>\n";
  nlohmann::json specs = nlohmann::json::object();
  for (const ReportSection& s : report.sections) {
    h += fmt::format("<section id=\"{}\">\n<h2>{}</h2>\n{}", html_escape(s.id), html_escape(s.heading), s.intro_html);
    for (const Figure& f : s.figures) {
      h += fmt::format(
          "<figure id=\"fig-{0}\">\n<h3>{1}</h3>\n<div class=\"vega\" id=\"view-{0}\"></div>\n<figcaption>{2} "
          "<a href=\"{3}\">SVG</a> &middot; <a href=\"{4}\">CSV</a></figcaption>\n</figure>\n",
          f.id, html_escape(f.title), html_escape(f.caption), relative_href(figures_dir + "/" + f.id + ".svg"),
          relative_href(figures_dir + "/" + f.id + ".csv"));
      specs[f.id] = f.spec;
    }
    h += "<div class=\"table-wrap\">" + s.tables_html + "</div>\n";
    h += "</section>\n";
  }
  h += "</main>\n<pre id=\"epsim-selftest\"></pre>\n";
  h += "<script type=\"application/json\" id=\"epsim-specs\">" + script_safe_json(specs.dump()) + "</script>\n";
  std::string license(vega_license_text());
  for (std::size_t at = license.find("</"); at != std::string::npos; at = license.find("</", at)) {
    license.replace(at, 2, "< /");
  }
  h += "<script type=\"text/plain\" id=\"vega-license\">\nVega, inlined below, from Debian's libjs-vega:\n" + license +
       "</script>\n";
  h += "<script>" + runtime + "</script>\n<script>";
  h += k_driver;
  h += "</script>\n</body>\n</html>\n";
  return h;
}

}  // namespace epsim::report
