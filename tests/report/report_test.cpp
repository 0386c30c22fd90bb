// The report's pieces against hand-made inputs: CSV reading and its errors, empirical CDFs, the three
// chart families (their CSVs are exactly the rows drawn), the page's self-containment, and the writer's
// all-or-nothing behaviour.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "report/csv_table.hpp"
#include "report/html_page.hpp"
#include "report/report_builder.hpp"
#include "report/report_inputs.hpp"
#include "report/report_writer.hpp"
#include "report/request_samples.hpp"
#include "report/study_figures.hpp"
#include "report/svg_export.hpp"
#include "report/vega_specs.hpp"

namespace fs = std::filesystem;
using namespace epsim::report;
using Catch::Matchers::Contains;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

Report one_figure_report() {
  Report r;
  r.title = "t";
  r.generator = "epsim test";
  ReportSection s;
  s.id = "s";
  s.heading = "Section";
  LineChartOptions o;
  o.x_title = "x";
  s.figures.push_back(line_chart(
      {"fig-a", "A", "caption"}, o,
      {{"p", "s1", 1.0, 2.0, std::nullopt, std::nullopt}, {"p", "s1", 2.0, 3.0, std::nullopt, std::nullopt}}));
  r.sections.push_back(s);
  return r;
}

}  // namespace

TEST_CASE("a CSV table reads its header and numbers, and its errors name the file, the line and the column") {
  const CsvTable t = CsvTable::parse("a,b,c\n1,x,2.5\n\n3,y,\n", "t.csv");
  REQUIRE(t.rows() == 2);
  REQUIRE(t.column("c") == 2);
  REQUIRE(t.number(0, 2) == 2.5);
  REQUIRE_FALSE(t.maybe_number(1, 2).has_value());
  REQUIRE(t.text(1, 1) == "y");
  REQUIRE_THAT(error_of([&] { (void)t.number(0, 1); }), Contains("t.csv:2") && Contains("\"b\"") && Contains("\"x\""));
  REQUIRE_THAT(error_of([&] { (void)t.number(1, 2); }), Contains("t.csv:4") && Contains("empty"));
  REQUIRE_THAT(error_of([&] { (void)t.column("d"); }), Contains("t.csv") && Contains("\"d\""));
  REQUIRE_THAT(error_of([] { (void)CsvTable::parse("a,b\n1,2,3\n", "r.csv"); }),
               Contains("r.csv:2") && Contains("3 cells") && Contains("2 columns"));
  REQUIRE_THAT(error_of([] { (void)CsvTable::parse("", "e.csv"); }), Contains("e.csv") && Contains("empty"));
  // Quoted labels (a study axis level with a comma) stay one cell, even across a line break.
  const CsvTable q = CsvTable::parse("label,v\n\"a, b\",1\n\"two\nlines\",2\nc,x\n", "q.csv");
  REQUIRE(q.rows() == 3);
  REQUIRE(q.text(0, 0) == "a, b");
  REQUIRE(q.text(1, 0) == "two\nlines");
  REQUIRE_THAT(error_of([&] { (void)q.number(2, 1); }), Contains("q.csv:5"));
  REQUIRE_THAT(error_of([] { (void)CsvTable::parse("a\n\"open\n", "o.csv"); }),
               Contains("o.csv:2") && Contains("never closed"));
  REQUIRE_THAT(error_of([] { (void)CsvTable::load("/nonexistent/x.csv"); }), Contains("/nonexistent/x.csv"));
}

TEST_CASE("an empirical CDF keeps every sample when few, else evenly spaced order statistics with both ends") {
  const auto small = ecdf({3.0, 1.0, 2.0, 2.0}, 10);
  REQUIRE(small.size() == 4);
  REQUIRE(small[0] == std::pair(1.0, 0.25));
  REQUIRE(small[1] == std::pair(2.0, 0.5));
  REQUIRE(small[2] == std::pair(2.0, 0.75));
  REQUIRE(small[3] == std::pair(3.0, 1.0));
  std::vector<double> v(1001);
  for (std::size_t i = 0; i < v.size(); ++i) {
    v[i] = static_cast<double>(1000 - i);  // 0..1000, reversed
  }
  const auto big = ecdf(v, 11);
  REQUIRE(big.size() == 11);
  // Ranks 0, 100, ..., 1000 of 0..1000: the values themselves, F = (rank + 1) / 1001.
  for (std::size_t k = 0; k < big.size(); ++k) {
    REQUIRE(big[k].first == static_cast<double>(100 * k));
    REQUIRE(big[k].second == Approx(static_cast<double>(100 * k + 1) / 1001.0));
  }
  REQUIRE(ecdf({}, 5).empty());
}

TEST_CASE("a line chart's CSV is exactly its rows, sorted by panel order, series and x, and panels scale alone") {
  LineChartOptions o;
  o.x_title = "rate";
  o.reference_y = 0.9;
  const Figure f = line_chart({"id", "T", "C"}, o,
                              {{"p2", "b", 2.0, 0.5, 0.4, 0.6},
                               {"p1", "a", 3.0, 1.0, std::nullopt, std::nullopt},
                               {"p1", "a", 1.0, 2.0, std::nullopt, std::nullopt},
                               {"p2", "b", 1.0, 0.25, 0.2, 0.3}},
                              {{1.5, "migration"}});
  REQUIRE(f.csv ==
          "panel,series,x,y,ci_low,ci_high\n"
          "p2,b,1,0.25,0.2,0.3\n"
          "p2,b,2,0.5,0.4,0.6\n"
          "p1,a,1,2,,\n"
          "p1,a,3,1,,\n"
          "(all panels),migration,1.5,,,\n");
  const auto& values = f.spec["data"][0]["values"];
  REQUIRE(values.size() == 4);
  REQUIRE(f.spec["data"][1]["values"].size() == 1);
  // x and y scales live in the panel group (TTFT and E2E panels differ by orders of magnitude).
  const auto& panel = f.spec["marks"][0];
  REQUIRE(panel["scales"].size() == 2);
  REQUIRE(panel["scales"][0]["name"] == "x");
  REQUIRE(panel["scales"][1]["name"] == "y");
  REQUIRE(panel["signals"][0]["name"] == "width");
  // Band (area), line, then the event rule and the dashed reference line.
  REQUIRE(panel["marks"][0]["marks"][0]["type"] == "area");
  REQUIRE(panel["marks"][0]["marks"][1]["type"] == "line");
  REQUIRE(panel["marks"][1]["type"] == "rule");
  REQUIRE(panel["marks"][2]["type"] == "rule");
}

TEST_CASE("interval charts and heat maps write the rows they draw, quoting text cells as RFC 4180 says") {
  const Figure iv = interval_chart(
      {"iv", "T", "C"}, {}, {{"rate", "eplb, 40", 10.0, 8.0, 12.0}, {"rate", "gem", 9.0, std::nullopt, std::nullopt}});
  REQUIRE(iv.csv == "panel,category,value,ci_low,ci_high,lower_bound\nrate,\"eplb, 40\",10,8,12,0\nrate,gem,9,,,0\n");
  const Figure hm = heat_map({"hm", "T", "C"}, {"GPU", "layer", 2},
                             {{"share", "0", "1", 0.25}, {"share", "1", "1", 0.75}, {"wait", "0", "1", 2.5}});
  REQUIRE(hm.csv == "panel,x,y,value\nshare,0,1,0.25\nshare,1,1,0.75\nwait,0,1,2.5\n");
  REQUIRE(hm.spec["scales"][0]["domain"] == nlohmann::json::array({"0", "1"}));
  // One faceted group per panel, each with its own colour scale over its own cells.
  REQUIRE(hm.spec["marks"][0]["type"] == "group");
  REQUIRE(hm.spec["marks"][0]["scales"][0]["domain"]["data"] == "pcells");
  REQUIRE(hm.spec["marks"][0]["marks"][0]["type"] == "rect");
  REQUIRE(figure_id("Run A/b.c") == "run_a_b_c");
  // What a run could not measure (NaN) is left out rather than drawn as a broken path.
  const Figure gaps =
      line_chart({"g", "T", "C"}, {},
                 {{"p", "s", 1.0, NAN, std::nullopt, std::nullopt}, {"p", "s", 2.0, 1.0, std::nullopt, std::nullopt}});
  REQUIRE(gaps.csv == "panel,series,x,y,ci_low,ci_high\np,s,2,1,,\n");
}

TEST_CASE("the page fetches nothing: a CSP forbids it, no element has a src, links stay in the page or its folder") {
  Report r = one_figure_report();
  r.sections[0].figures[0].title = "</script><script>alert(1)</script>";
  r.sections[0].figures[0].spec["description"] = "</script>";
  const std::string page = html_page(r, "rep-figures");
  REQUIRE_THAT(page, Contains("Content-Security-Policy") && Contains("default-src 'none'"));
  // No attribute loads anything (std::regex avoided: GCC 12 warns inside it under the sanitizers).
  for (const char* attribute : {" src=", " src =", " srcset="}) {
    REQUIRE(page.find(attribute) == std::string::npos);
  }
  for (std::size_t at = page.find("href=\""); at != std::string::npos; at = page.find("href=\"", at + 1)) {
    const std::size_t begin = at + 6;
    const std::string target = page.substr(begin, page.find('"', begin) - begin);
    INFO(target);
    REQUIRE((target.starts_with("#") || target.starts_with("rep-figures/")));
  }
  // Text a figure carries cannot close the script element its specification sits in.
  REQUIRE(page.find("</script><script>alert") == std::string::npos);
  REQUIRE_THAT(page, Contains("\\u003c/script>"));
  REQUIRE_THAT(script_safe_json("{\"a\":\"</script>\"}"), Contains("\\u003c/script>"));
  REQUIRE_THAT(page, Contains("BSD-3-Clause"));  // Vega's license travels with it
}

TEST_CASE("without Node.js the writer fails naming the fix and writes nothing") {
  const fs::path dir = fs::temp_directory_path() / "epsim-report-nonode";
  fs::remove_all(dir);
  const std::string e = error_of([&] {
    write_report(one_figure_report(), dir / "r.html", {true, "/nonexistent/bin/node"});
  });
  REQUIRE_THAT(e, Contains("/nonexistent/bin/node") && Contains("nodejs") && Contains("--no-svg"));
  REQUIRE_FALSE(fs::exists(dir));
  REQUIRE_THAT(error_of([&] { write_report(one_figure_report(), dir / "r.txt", {false, ""}); }), Contains(".html"));
  REQUIRE_FALSE(program_available("/nonexistent/bin/node"));
}

TEST_CASE("the writer puts the page, then each figure's SVG, CSV and Vega spec beside it, and nothing else") {
  const fs::path dir = fs::temp_directory_path() / "epsim-report-write";
  fs::remove_all(dir);
  // An earlier report in the same place, with a figure the new one does not have.
  Report earlier = one_figure_report();
  earlier.sections[0].figures[0].id = "stale";
  write_report(earlier, dir / "rep.html", {false, ""});
  REQUIRE(fs::exists(dir / "rep-figures" / "stale.csv"));
  const bool svg = program_available(node_program());
  const WrittenReport w = write_report(one_figure_report(), dir / "rep.html", {svg, node_program()});
  REQUIRE(w.figures == 1);
  REQUIRE(fs::exists(dir / "rep.html"));
  REQUIRE(slurp(dir / "rep-figures" / "fig-a.csv") == "panel,series,x,y,ci_low,ci_high\np,s1,1,2,,\np,s1,2,3,,\n");
  REQUIRE(nlohmann::json::parse(slurp(dir / "rep-figures" / "fig-a.vg.json"))["data"][0]["values"].size() == 2);
  REQUIRE_FALSE(fs::exists(dir / "rep-figures" / "stale.csv"));  // epsim's own, from the earlier report
  REQUIRE_FALSE(fs::exists(dir / "rep-figures" / "stale.vg.json"));
  // The manifest of what epsim wrote, and those files only.
  REQUIRE(slurp(dir / "rep-figures" / ".epsim-manifest")
              .ends_with(std::string("\nfig-a.csv\n") + (svg ? "fig-a.svg\n" : "") + "fig-a.vg.json\n"));
  fs::remove(dir / "rep-figures" / ".epsim-manifest");
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir / "rep-figures")) {
    INFO(e.path());
    REQUIRE(e.path().filename().string().starts_with("fig-a."));  // no temporary left behind
    ++files;
  }
  REQUIRE(files == (svg ? 3U : 2U));
  if (svg) {
    const std::string s = slurp(dir / "rep-figures" / "fig-a.svg");
    REQUIRE(s.starts_with("<svg"));
    REQUIRE_THAT(s, Contains("mark-line"));  // Vega drew the line
  } else {
    WARN("no Node.js: the SVG half of this test did not run");
  }
  fs::remove_all(dir);
}

namespace {

// A compare study directory written before issue 35: points.csv with Student-t intervals that leave
// their metric's range (issue 35's reproduced values) and relative changes of a proportion near 0.
fs::path old_study(const fs::path& dir) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "study.json")
      << R"({"kind": "compare", "replications": 2, "baseline": "policy=linear", "rate_axis": "workload.rate_rps",
  "slo_target": 0.9, "report": ["slo.attainment", "ttft_ms.p90"],
  "axes": [{"name": "policy"}, {"name": "workload.rate_rps"}]})";
  std::ofstream runs(dir / "runs.csv");
  runs << "run,point,replication,policy,workload.rate_rps,seed,workload_seed,cluster_seed,slo.attainment,ttft_ms.p90\n";
  for (int i = 0; i < 8; ++i) {
    runs << i << "," << i / 2 << "," << i % 2 << "," << (i < 4 ? "linear" : "eplb") << "," << (i % 4 < 2 ? 100 : 200)
         << ",1,2,3,0.5,1000\n";
  }
  std::ofstream(dir / "points.csv")
      << "point,policy,workload.rate_rps,metric,n,mean,std,ci95_low,ci95_high,baseline_diff,"
         "baseline_diff_ci95_low,baseline_diff_ci95_high,baseline_rel_diff\n"
         "0,linear,100,slo.attainment,2,0.93,0.0849,0.1676,1.6924,0,0,0,0\n"
         "0,linear,100,ttft_ms.p90,2,15450,3911,-19695,50595,0,0,0,0\n"
         "1,linear,200,slo.attainment,2,0.03,0.01,-0.097,0.157,0,0,0,0\n"
         "1,linear,200,ttft_ms.p90,2,900,70,271,1529,0,0,0,0\n"
         "2,eplb,100,slo.attainment,2,0.95,0.05,0.3,1.6,0.02,-0.5,0.54,0.0215\n"
         "2,eplb,100,ttft_ms.p90,2,10000,5000,-35000,55000,-5450,-60000,49100,-0.3528\n"
         "3,eplb,200,slo.attainment,2,0.9,0.1,-0.37,2.17,0.87,-1.5,3.2,29\n"
         "3,eplb,200,ttft_ms.p90,2,800,50,350,1250,-100,-1500,1300,-0.111\n";
  return dir;
}

const Figure& figure_named(const std::vector<Figure>& figures, const std::string& suffix) {
  const auto it = std::find_if(figures.begin(), figures.end(), [&](const Figure& f) { return f.id.ends_with(suffix); });
  REQUIRE(it != figures.end());
  return *it;
}

}  // namespace

TEST_CASE("a study's figures never draw an interval outside what its metric can be, old points.csv too") {
  const fs::path dir = old_study(fs::temp_directory_path() / "epsim-report-ranges");
  const ReportInputs inputs = load_report_inputs({dir});
  const std::vector<Figure> figures = study_figures(inputs.studies.at(0));
  // Attainment bands within [0, 1]; latency bands at or above 0.
  const CsvTable att = CsvTable::parse(figure_named(figures, "attainment-vs-rate").csv, "att.csv");
  REQUIRE(att.rows() == 4);
  for (std::size_t r = 0; r < att.rows(); ++r) {
    REQUIRE(att.number(r, att.column("ci_low")) >= 0.0);
    REQUIRE(att.number(r, att.column("ci_high")) <= 1.0);
  }
  // A bound inside the range is kept as written (eplb sorts first: linear at 100 req/s is row 2).
  REQUIRE(att.text(2, att.column("series")) == "linear");
  REQUIRE(att.number(2, att.column("ci_low")) == 0.1676);
  REQUIRE(att.number(2, att.column("ci_high")) == 1.0);
  const CsvTable lat = CsvTable::parse(figure_named(figures, "latency-vs-rate").csv, "lat.csv");
  REQUIRE(lat.rows() == 4);
  for (std::size_t r = 0; r < lat.rows(); ++r) {
    REQUIRE(lat.number(r, lat.column("ci_low")) >= 0.0);
  }
  // The change figure: attainment in percentage points within [-100, 100] (not +2,900 %), the p90 TTFT in %
  // never below -100 %.
  const CsvTable change = CsvTable::parse(figure_named(figures, "vs-baseline").csv, "change.csv");
  int points = 0;
  int percent = 0;
  for (std::size_t r = 0; r < change.rows(); ++r) {
    const std::string& panel = change.text(r, change.column("panel"));
    const double v = change.number(r, change.column("value"));
    const double lo = change.number(r, change.column("ci_low"));
    const double hi = change.number(r, change.column("ci_high"));
    INFO(panel << " " << v << " [" << lo << ", " << hi << "]");
    if (panel == "SLO attainment, change (points)") {
      ++points;
      REQUIRE((v == Approx(2.0) || v == Approx(87.0)));
      REQUIRE(lo >= -100.0);
      REQUIRE(hi <= 100.0);
    } else {
      REQUIRE(panel == "p90 TTFT (ms), change (%)");
      ++percent;
      REQUIRE(lo >= -100.0);
    }
  }
  REQUIRE(points == 2);
  REQUIRE(percent == 2);
  // n = 2: the section says the intervals mean little, visibly.
  const Report report = build_report(inputs, "t", "epsim test");
  REQUIRE_THAT(report.sections.at(0).intro_html,
               Contains("class=\"note warn\"") && Contains("Too few replications") && Contains("12.7"));
  fs::remove_all(dir);
}

TEST_CASE("an interval chart draws a lower bound (a censored max rate) with an open marker") {
  const Figure iv = interval_chart(
      {"iv", "T", "C"}, {}, {{"rate", "ep16", 15.0, 15.0, 16.0}, {"rate", "ep72", 36.0, 36.0, std::nullopt, true}});
  REQUIRE(iv.csv == "panel,category,value,ci_low,ci_high,lower_bound\nrate,ep16,15,15,16,0\nrate,ep72,36,36,,1\n");
  REQUIRE(iv.spec["data"][0]["values"][1]["lower_bound"] == true);
  REQUIRE(iv.spec["data"][0]["values"][0]["lower_bound"] == false);
  REQUIRE(iv.spec.dump().find("triangle-right") != std::string::npos);
}
