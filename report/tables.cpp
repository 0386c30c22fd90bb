// SPDX-License-Identifier: Apache-2.0
#include "report/tables.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/csv_lines.hpp"
#include "core/metric_kind.hpp"

namespace epsim::report {
namespace {

std::string num(double v) {
  if (!std::isfinite(v)) {
    return "-";
  }
  return fmt::format("{:.4g}", v);
}

}  // namespace

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string study_metrics_table(const StudyInput& s) {
  std::vector<std::string> metrics;
  for (const std::string& m : s.report_metrics) {
    if (m != "gpus" && m != "ep_size") {
      metrics.push_back(m);
    }
  }
  const std::size_t metric = s.points.column("metric");
  const std::size_t point = s.points.column("point");
  const std::size_t mean = s.points.column("mean");
  const auto lo = s.points.find("ci95_low");
  const auto hi = s.points.find("ci95_high");
  const auto n = s.points.find("n");
  // (point, metric) -> cell; point -> its first row (for labels).
  std::map<std::pair<int, std::string>, std::string> cells;
  std::map<int, std::size_t> first_row;
  for (std::size_t r = 0; r < s.points.rows(); ++r) {
    const int p = static_cast<int>(s.points.number(r, point));
    first_row.emplace(p, r);
    const std::string& m = s.points.text(r, metric);
    std::string cell = num(s.points.number(r, mean));
    if (lo.has_value() && hi.has_value()) {
      auto l = s.points.maybe_number(r, *lo);
      auto h = s.points.maybe_number(r, *hi);
      if (l.has_value() && h.has_value() && *l != *h) {
        // Kept within the metric's range also for a points.csv written before intervals were.
        const core::MetricKind kind = core::metric_kind(m);
        const double v = s.points.number(r, mean);
        if (v >= core::kind_low(kind) && v <= core::kind_high(kind)) {
          *l = std::clamp(*l, core::kind_low(kind), core::kind_high(kind));
          *h = std::clamp(*h, core::kind_low(kind), core::kind_high(kind));
        }
        cell += fmt::format(" <span class=\"ci\">[{}, {}]</span>", num(*l), num(*h));
      }
    }
    cells[{p, m}] = cell;
  }
  std::string html = "<table><thead><tr><th>point</th>";
  for (const std::string& a : s.axes) {
    html += "<th>" + html_escape(a) + "</th>";
  }
  html += "<th>n</th>";
  for (const std::string& m : metrics) {
    html += "<th>" + html_escape(m) + "</th>";
  }
  html += "</tr></thead><tbody>\n";
  for (const auto& [p, r] : first_row) {
    html += fmt::format("<tr><td>{}</td>", p);
    for (const std::string& a : s.axes) {
      html += "<td>" + html_escape(s.points.text(r, s.points.column(a))) + "</td>";
    }
    html += "<td>" + (n.has_value() ? html_escape(s.points.text(r, *n)) : std::string("-")) + "</td>";
    for (const std::string& m : metrics) {
      const auto it = cells.find({p, m});
      html += "<td>" + (it == cells.end() ? std::string("-") : it->second) + "</td>";
    }
    html += "</tr>\n";
  }
  html += "</tbody></table>\n";
  return html;
}

std::string runs_metrics_table(const std::vector<RunInput>& runs) {
  struct Column {
    const char* title;
    std::vector<const char*> path;
  };
  const std::vector<Column> columns = {
      {"finished", {"requests_finished"}},
      {"TTFT p50 (ms)", {"ttft_ms", "p50"}},
      {"TTFT p90", {"ttft_ms", "p90"}},
      {"TTFT p99", {"ttft_ms", "p99"}},
      {"TPOT p50 (ms)", {"tpot_ms", "p50"}},
      {"TPOT p90", {"tpot_ms", "p90"}},
      {"E2E p90 (ms)", {"e2e_ms", "p90"}},
      {"SLO attainment", {"slo", "attainment"}},
      {"goodput (req/s)", {"slo", "goodput_rps"}},
      {"throughput (req/s)", {"throughput_rps"}},
      {"mean step (ms)", {"mean_step_ms"}},
      {"straggler gap (us)", {"straggler_gap_us", "mean"}},
      {"barrier idle", {"barrier_idle_fraction"}},
      // Speculative decoding: accepted drafts per verify ("-" when off; a flat figure name).
      {"accepted drafts", {"speculative.mean_accepted_tokens"}},
  };
  // Columns of features only some runs use, shown when one of the runs reports them.
  const std::vector<Column> optional = {
      {"prefix hit rate (tokens)", {"prefix_cache", "hit_rate_tokens"}},
      {"prefix hit rate (requests)", {"prefix_cache", "hit_rate_requests"}},
  };
  const auto lookup = [](const RunInput& r, const Column& c) -> const nlohmann::json* {
    const nlohmann::json* v = &r.summary["metrics"];
    for (const char* key : c.path) {
      v = v->is_object() && v->contains(key) ? &(*v)[key] : nullptr;
      if (v == nullptr) {
        break;
      }
    }
    return v != nullptr && v->is_number() ? v : nullptr;
  };
  std::vector<Column> shown = columns;
  for (const Column& c : optional) {
    if (std::any_of(runs.begin(), runs.end(), [&](const RunInput& r) { return lookup(r, c) != nullptr; })) {
      shown.push_back(c);
    }
  }
  std::string html = "<table><thead><tr><th>run</th><th>setup</th>";
  for (const Column& c : shown) {
    html += fmt::format("<th>{}</th>", html_escape(c.title));
  }
  html += "</tr></thead><tbody>\n";
  for (const RunInput& r : runs) {
    const nlohmann::json& res = r.summary.value("resolved", nlohmann::json::object());
    const std::string setup = fmt::format("{} on {} x {}, EP{}, {} / {}", res.value("model", "?"), res.value("gpus", 0),
                                          res.value("gpu", "?"), res.value("ep_size", 0), res.value("placement", "?"),
                                          res.value("routing", "?"));
    html += "<tr><td>" + html_escape(r.label) + "</td><td class=\"text\">" + html_escape(setup) + "</td>";
    for (const Column& c : shown) {
      const nlohmann::json* v = lookup(r, c);
      html += "<td>" + (v != nullptr ? num(v->get<double>()) : std::string("-")) + "</td>";
    }
    html += "</tr>\n";
  }
  html += "</tbody></table>\n";
  return html;
}

std::string csv_table_html(const CsvTable& t, std::size_t max_rows) {
  std::string html = "<table><thead><tr>";
  for (const std::string& h : t.header()) {
    html += "<th>" + html_escape(h) + "</th>";
  }
  html += "</tr></thead><tbody>\n";
  for (std::size_t r = 0; r < t.rows() && r < max_rows; ++r) {
    html += "<tr>";
    for (std::size_t c = 0; c < t.header().size(); ++c) {
      // Long numbers shortened to 4 significant digits; the CSV beside the report keeps them whole.
      double v = 0.0;
      const std::string& cell = t.text(r, c);
      const bool numeric = core::parse_number(cell, v);
      html += "<td>" + (numeric && cell.size() > 8 ? num(v) : html_escape(cell)) + "</td>";
    }
    html += "</tr>\n";
  }
  html += "</tbody></table>\n";
  if (t.rows() > max_rows) {
    html += fmt::format("<p class=\"note\">{} more rows in {}.</p>\n", t.rows() - max_rows, html_escape(t.source()));
  }
  return html;
}

std::string json_block(const std::string& summary, const nlohmann::json& doc) {
  return "<details><summary>" + html_escape(summary) + "</summary><pre>" + html_escape(doc.dump(2)) +
         "</pre></details>\n";
}

}  // namespace epsim::report
