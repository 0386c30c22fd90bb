// SPDX-License-Identifier: Apache-2.0
#include "report/report_builder.hpp"

#include <fmt/format.h>

#include <set>

#include "core/confidence.hpp"
#include "report/limits_notice.hpp"
#include "report/run_figures.hpp"
#include "report/study_figures.hpp"
#include "report/tables.hpp"

namespace epsim::report {
namespace {

ReportSection study_section(const StudyInput& s) {
  ReportSection sec;
  sec.id = "study-" + figure_id(s.label);
  sec.heading = fmt::format("Study {}", s.label);
  const nlohmann::json& j = s.study;
  const std::int64_t replications = j.value("replications", std::int64_t{0});
  sec.intro_html = fmt::format(
      "<p>Kind <b>{}</b>, {} replication(s) per point, {} point(s), {} run(s){}{}. Intervals are 95 % Student-t "
      "intervals over replications, kept within what each metric can be (proportions in [0, 1], latencies, "
      "rates and counts at or above 0); a proportion's change against the baseline is in percentage "
      "points.</p>\n",
      html_escape(s.kind), replications, j.contains("points") ? j["points"].size() : 0, s.runs.rows(),
      s.baseline.empty() ? "" : fmt::format("; baseline <b>{}</b>", html_escape(s.baseline)),
      s.rate_axis.empty() ? "" : fmt::format("; rate axis <b>{}</b>", html_escape(s.rate_axis)));
  // What the study cost (study.json's timings since issue 40): CPU time, which a shared machine does
  // not inflate as it does wall time.
  if (const auto t = j.find("timings"); t != j.end() && t->is_object()) {
    const auto number = [&](const char* key) { return t->contains(key) && (*t)[key].is_number(); };
    if (number("cpu_s") && number("wall_s") && number("run_cpu_s_total")) {
      sec.intro_html += fmt::format(
          "<p>Cost: {:.1f} CPU s for the sweep that wrote these results ({:.1f} s wall); its runs, journal "
          "reuses included, {:.1f} CPU s.</p>\n",
          (*t)["cpu_s"].get<double>(), (*t)["wall_s"].get<double>(), (*t)["run_cpu_s_total"].get<double>());
    }
  }
  if (replications < core::k_min_interval_n) {
    sec.intro_html += fmt::format(
        "<p class=\"note warn\"><b>Too few replications for meaningful intervals:</b> {} per point (fewer than "
        "{}). {}Run the study with <code>replications &gt;= {}</code> before reading differences into the "
        "bands.</p>\n",
        replications, core::k_min_interval_n,
        replications >= 2
            ? fmt::format("With {} the 95 % interval is the mean +- {:.1f} standard errors on {} "
                          "degree(s) of freedom and says little. ",
                          replications, core::student_t_quantile(0.95, replications - 1), replications - 1)
            : "With one there are no intervals. ",
        core::k_min_interval_n);
  }
  sec.intro_html += study_limits_html(s);
  sec.figures = study_figures(s);
  sec.tables_html = "<h3>Headline metrics (mean [95 % interval])</h3>\n" + study_metrics_table(s);
  if (s.max_rate.has_value()) {
    sec.tables_html += "<h3>Max sustainable rate (max_rate.csv)</h3>\n" + csv_table_html(*s.max_rate, 200);
  }
  if (s.break_even.has_value()) {
    sec.tables_html +=
        "<h3>Break-even interval of rebalancing (break_even.csv)</h3>\n" + csv_table_html(*s.break_even, 200);
  }
  if (s.rebalance.has_value()) {
    sec.tables_html += "<h3>Rebalancing against off (rebalance.csv)</h3>\n" + csv_table_html(*s.rebalance, 400);
  }
  if (s.ranking.has_value()) {
    sec.tables_html += "<h3>Ranking by the objective (ranking.csv)</h3>\n" + csv_table_html(*s.ranking, 200);
  }
  sec.tables_html += json_block("The resolved study (study.json)", s.study);
  return sec;
}

ReportSection runs_section(const std::vector<RunInput>& runs) {
  ReportSection sec;
  sec.id = "runs";
  sec.heading = runs.size() == 1 ? fmt::format("Run {}", runs.front().label) : "Runs";
  sec.intro_html =
      "<p>Single runs: percentiles are each run's own over its measured requests; intervals need replications "
      "(<code>epsim sweep</code>).</p>\n";
  sec.intro_html += runs_limits_html(runs);
  sec.figures = run_figures(runs);
  sec.tables_html = "<h3>Headline metrics</h3>\n" + runs_metrics_table(runs);
  for (const RunInput& r : runs) {
    nlohmann::json cfg{{"seeds", r.summary.value("seeds", nlohmann::json::object())},
                       {"config", r.summary.value("config", nlohmann::json::object())},
                       {"resolved", r.summary.value("resolved", nlohmann::json::object())}};
    sec.tables_html += json_block(fmt::format("Configuration of {} (summary.json: config and resolved)", r.label), cfg);
  }
  return sec;
}

}  // namespace

Report build_report(const ReportInputs& inputs, const std::string& title, const std::string& generator) {
  Report r;
  r.title = title;
  r.generator = generator;
  for (const StudyInput& s : inputs.studies) {
    r.inputs.push_back(s.dir.string());
    r.sections.push_back(study_section(s));
  }
  for (const RunInput& run : inputs.runs) {
    r.inputs.push_back(run.dir.string());
  }
  if (!inputs.runs.empty()) {
    r.sections.push_back(runs_section(inputs.runs));
  }
  // Figure ids name files: keep them unique across sections (two inputs of the same name).
  std::set<std::string> ids;
  for (ReportSection& s : r.sections) {
    for (Figure& f : s.figures) {
      std::string id = f.id;
      for (int n = 2; !ids.insert(id).second; ++n) {
        id = fmt::format("{}-{}", f.id, n);
      }
      f.id = id;
    }
  }
  return r;
}

}  // namespace epsim::report
