#include "report/html_page.hpp"

#include <fmt/format.h>

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
.limits { border-left: 4px solid #b35900; background: #fff6ec; padding: 2px 12px; margin: 10px 0; }
pre { background: #f7f8fa; padding: 10px; overflow-x: auto; font-size: 12px; }
#epsim-selftest { display: none; }
)css";

// Draws every figure, then writes one line per figure (its id and the number of marks drawn) and "done"
// into #epsim-selftest; a failure writes "error ...". A headless browser reads that line (docs/reports.md).
constexpr std::string_view k_driver = R"js(
(function () {
  var out = document.getElementById("epsim-selftest");
  var lines = [];
  window.addEventListener("error", function (e) { lines.push("error " + e.message); out.textContent = lines.join("\n"); });
  var vega = __epsimVega();
  var specs = JSON.parse(document.getElementById("epsim-specs").textContent);
  var ids = Object.keys(specs);
  Promise.all(ids.map(function (id) {
    var el = document.getElementById("view-" + id);
    var view = new vega.View(vega.parse(specs[id]), { renderer: "svg", container: el, hover: true });
    return view.runAsync().then(function () {
      lines.push("figure " + id + " marks " + el.querySelectorAll("g.role-mark > *").length);
    });
  })).then(function () {
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
  // Nothing may be fetched: inline scripts and styles only. Vega compiles its expressions with Function().
  h += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline' "
       "'unsafe-eval'; style-src 'unsafe-inline'; img-src data:\">\n";
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
          "<a href=\"{3}/{0}.svg\">SVG</a> &middot; <a href=\"{3}/{0}.csv\">CSV</a></figcaption>\n</figure>\n",
          f.id, html_escape(f.title), html_escape(f.caption), html_escape(figures_dir));
      specs[f.id] = f.spec;
    }
    h += s.tables_html;
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
  h += "<script>\n" + vega_runtime_js() + "</script>\n<script>";
  h += k_driver;
  h += "</script>\n</body>\n</html>\n";
  return h;
}

}  // namespace epsim::report
