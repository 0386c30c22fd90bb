// SPDX-License-Identifier: Apache-2.0
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

#include <fmt/format.h>

#include "core/error.hpp"
#include "report/csv_table.hpp"
#include "report/html_page.hpp"
#include "report/report_builder.hpp"
#include "report/report_inputs.hpp"
#include "report/report_writer.hpp"
#include "report/request_samples.hpp"
#include "report/series_style.hpp"
#include "report/sha256.hpp"
#include "report/study_figures.hpp"
#include "report/svg_export.hpp"
#include "report/tables.hpp"
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
    REQUIRE((target.starts_with("#") || target.starts_with("./rep-figures/")));
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

// Every href="..." of a page.
std::vector<std::string> hrefs(const std::string& page) {
  std::vector<std::string> out;
  for (std::size_t at = page.find("href=\""); at != std::string::npos; at = page.find("href=\"", at + 1)) {
    const std::size_t begin = at + 6;
    out.push_back(page.substr(begin, page.find('"', begin) - begin));
  }
  return out;
}

// The text between `open` (its end) and the next `close`, for each occurrence.
std::vector<std::string> elements(const std::string& page, const std::string& open, const std::string& close) {
  std::vector<std::string> out;
  for (std::size_t at = page.find(open); at != std::string::npos; at = page.find(open, at + 1)) {
    const std::size_t begin = at + open.size();
    out.push_back(page.substr(begin, page.find(close, begin) - begin));
  }
  return out;
}

std::string hex(const std::array<std::uint8_t, 32>& d) {
  std::string s;
  for (const std::uint8_t b : d) {
    s += fmt::format("{:02x}", b);
  }
  return s;
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
  // A bound inside the range is kept as written (series in the study's order: linear at 100 req/s is row 0).
  REQUIRE(att.text(0, att.column("series")) == "linear");
  REQUIRE(att.number(0, att.column("ci_low")) == 0.1676);
  REQUIRE(att.number(0, att.column("ci_high")) == 1.0);
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

TEST_CASE("SHA-256 and base64 give the published test vectors") {
  // FIPS 180-4 examples (NIST CSRC, "SHA256.pdf") and RFC 4648 section 10.
  REQUIRE(hex(sha256("abc")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  REQUIRE(hex(sha256("")) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  REQUIRE(hex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")) ==
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  REQUIRE(hex(sha256(std::string(1000000, 'a'))) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // 55 and 56 bytes: the length still fits the last block, then needs another.
  REQUIRE(hex(sha256(std::string(55, 'a'))) == "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  REQUIRE(hex(sha256(std::string(56, 'a'))) == "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  const auto b64 = [](const std::string& s) {
    return base64(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
  };
  REQUIRE(b64("").empty());
  REQUIRE(b64("f") == "Zg==");
  REQUIRE(b64("fo") == "Zm8=");
  REQUIRE(b64("foo") == "Zm9v");
  REQUIRE(b64("foobar") == "Zm9vYmFy");
  // The CSP form of SHA-256("abc"), as `openssl dgst -sha256 -binary | base64` prints it.
  REQUIRE(csp_hash_source("abc") == "'sha256-ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0='");
}

TEST_CASE("a report's name cannot turn its figure links into a scheme, and the CSP runs only the page's own script") {
  Report r = one_figure_report();
  struct Case {
    const char* dir;
    const char* svg_href;
  };
  for (const Case c : {Case{"javascript:x-figures", "./javascript%3Ax-figures/fig-a.svg"},
                       Case{"r-10:00-figures", "./r-10%3A00-figures/fig-a.svg"},
                       Case{"a b\"<c>&d%-figures", "./a%20b%22%3Cc%3E%26d%25-figures/fig-a.svg"},
                       Case{"data:text-figures", "./data%3Atext-figures/fig-a.svg"}}) {
    INFO(c.dir);
    const std::string page = html_page(r, c.dir);
    bool svg_link = false;
    for (const std::string& h : hrefs(page)) {
      INFO(h);
      REQUIRE((h.starts_with("#") || h.starts_with("./")));
      REQUIRE(h.find(':') == std::string::npos);  // no scheme anywhere, nothing a browser could call one
      svg_link = svg_link || h == c.svg_href;
    }
    REQUIRE(svg_link);
  }
  REQUIRE(relative_href("r-figures/x.csv") == "./r-figures/x.csv");

  const std::string page = html_page(r, "rep-figures");
  const std::vector<std::string> csp = elements(page, "Content-Security-Policy\" content=\"", "\"");
  REQUIRE(csp.size() == 1);
  INFO(csp[0]);
  REQUIRE(csp[0].find("unsafe-inline") == std::string::npos);
  REQUIRE_THAT(csp[0], Contains("default-src 'none'"));
  // Exactly the page's executable scripts and its style element, by the SHA-256 of their text.
  const std::vector<std::string> scripts = elements(page, "<script>", "</script>");
  REQUIRE(scripts.size() == 2);  // Vega with its loader, and the driver
  const std::vector<std::string> styles = elements(page, "<style>", "</style>");
  REQUIRE(styles.size() == 1);
  const std::string script_src =
      csp[0].substr(csp[0].find("script-src"), csp[0].find(';', csp[0].find("script-src")) - csp[0].find("script-src"));
  REQUIRE(script_src ==
          "script-src " + csp_hash_source(scripts[0]) + " " + csp_hash_source(scripts[1]) + " 'unsafe-eval'");
  REQUIRE_THAT(csp[0], Contains("style-src " + csp_hash_source(styles[0]) + ";"));
}

TEST_CASE("series keep the study's order, each with its own colour, dash and hollow marker, legend below") {
  // Okabe and Ito's palette (2008), in the order series_style.hpp gives it.
  const std::vector<std::string> okabe_ito{"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                           "#E69F00", "#56B4E9", "#000000", "#F0E442"};
  REQUIRE(palette_colours() == 8);
  for (std::size_t i = 0; i < okabe_ito.size(); ++i) {
    REQUIRE(series_style(i).colour == okabe_ito[i]);
  }
  // The first six differ in all three; any two of the first 168 in at least one (cycles 8, 6 and 7).
  for (std::size_t i = 0; i < 168; ++i) {
    for (std::size_t j = i + 1; j < 168; ++j) {
      const SeriesStyle a = series_style(i);
      const SeriesStyle b = series_style(j);
      const int differ = (a.colour != b.colour) + (a.dash != b.dash) + (a.marker != b.marker);
      INFO(i << " " << j);
      REQUIRE(differ >= (j < 6 ? 3 : 1));
    }
  }
  REQUIRE(series_style(0).dash.empty());  // the first series solid
  REQUIRE(series_style(168).colour == series_style(0).colour);

  // A study's order (policy axis: linear, eplb, gem) is not the alphabet's (eplb, gem, linear).
  std::vector<LinePoint> rows;
  for (const char* s : {"linear", "eplb", "gem"}) {
    for (const double x : {2.0, 1.0}) {
      rows.push_back({"attainment", s, x, 0.5, std::nullopt, std::nullopt});
    }
  }
  LineChartOptions o;
  o.points = true;
  o.series_title = "policy";
  const Figure f = line_chart({"o", "T", "C"}, o, rows);
  REQUIRE(f.csv ==
          "panel,series,x,y,ci_low,ci_high\n"
          "attainment,linear,1,0.5,,\nattainment,linear,2,0.5,,\n"
          "attainment,eplb,1,0.5,,\nattainment,eplb,2,0.5,,\n"
          "attainment,gem,1,0.5,,\nattainment,gem,2,0.5,,\n");
  const nlohmann::json order = nlohmann::json::array({"linear", "eplb", "gem"});
  for (const auto& scale : f.spec["scales"]) {
    INFO(scale["name"]);
    REQUIRE(scale["domain"] == order);  // colour, dash, marker and legend symbol alike
  }
  REQUIRE(f.spec["scales"][0]["range"] == nlohmann::json::array({okabe_ito[0], okabe_ito[1], okabe_ito[2]}));
  REQUIRE(f.spec["scales"][1]["range"][1] == nlohmann::json::array({8, 4}));
  REQUIRE(f.spec["legends"].size() == 1);
  const auto& legend = f.spec["legends"][0];
  REQUIRE(legend["orient"] == "bottom");  // below the panels: a legend never widens a figure
  REQUIRE(legend["columns"] == 3);        // three short labels side by side
  REQUIRE(legend["labelLimit"].get<int>() >= 1000);
  REQUIRE(legend["encode"]["symbols"]["update"]["shape"]["scale"] == "legend_symbol");
  // Lines carry their dash, markers are hollow outlines in the series' shape.
  const auto& series_marks = f.spec["marks"][0]["marks"][0]["marks"];
  REQUIRE(series_marks[0]["type"] == "line");
  REQUIRE(series_marks[0]["encode"]["enter"]["strokeDash"]["scale"] == "dash");
  REQUIRE(series_marks[1]["type"] == "symbol");
  REQUIRE(series_marks[1]["encode"]["enter"]["shape"]["scale"] == "marker");
  REQUIRE(series_marks[1]["encode"]["enter"]["fill"]["value"] == "transparent");
}

TEST_CASE("coinciding series stay visible: their markers fall on different points of the same curve") {
  std::vector<LinePoint> rows;
  for (const char* s : {"a", "b"}) {
    for (int i = 0; i < 60; ++i) {
      rows.push_back({"cdf", s, static_cast<double>(i), i / 60.0, std::nullopt, std::nullopt});
    }
  }
  const Figure f = line_chart({"c", "T", "C"}, cdf_options("share", ""), rows);
  // 60 points: a marker every 10th, series a from the first point, series b shifted by half a stride.
  std::vector<int> a;
  std::vector<int> b;
  for (const auto& v : f.spec["data"][0]["values"]) {
    if (v["mark"].get<bool>()) {
      (v["series"] == "a" ? a : b).push_back(static_cast<int>(v["x"].get<double>()));
    }
  }
  REQUIRE(a == std::vector<int>{0, 10, 20, 30, 40, 50});
  REQUIRE(b == std::vector<int>{5, 15, 25, 35, 45, 55});
}

TEST_CASE("a legend symbol draws its series' dash as geometry, broken around a solid marker") {
  // 28 px symbol: 14 px per unit; the marker's half side sqrt(50) / 2 = 3.536 px = 0.253 units, the line
  // stops 1.5 px (0.107 units) short of it on each side: at +-0.360.
  REQUIRE(legend_symbol(0, 28.0) ==
          "M-1,0L-0.36,0M0.36,0L1,0M0.253,0A0.253,0.253,0,1,1,-0.253,0A0.253,0.253,0,1,1,0.253,0Z");
  // Dashes 8 px on, 4 px off from the left end: [-1, -0.429], [-0.143, 0.429] less the marker's gap
  // (what is left: [0.36, 0.429]), [0.714, 1]; then the square, half side 0.8 x 0.253 = 0.202.
  REQUIRE(legend_symbol(1, 28.0) ==
          "M-1,0L-0.429,0M0.36,0L0.429,0M0.714,0L1,0"
          "M-0.202,-0.202L0.202,-0.202L0.202,0.202L-0.202,0.202Z");
}

TEST_CASE("figures fit a laptop's width, and a change figure of 30 points x 5 metrics stays short") {
  // Three panels side by side: 3 x (270 plot + 75 axis) + 2 x 30 gap = 1,095 px.
  std::vector<LinePoint> rows;
  for (const char* p : {"TTFT", "TPOT", "E2E", "goodput", "step"}) {
    rows.push_back({p, "s", 1.0, 1.0, std::nullopt, std::nullopt});
  }
  const Figure lines = line_chart({"l", "T", "C"}, {}, rows);
  REQUIRE(lines.spec["layout"]["columns"] == 3);
  REQUIRE(3 * (270 + 75) + 2 * 30 <= k_figure_max_width_px);
  // The change figure of compare-policies.toml: 6 policies x 5 rates against the baseline, 5 metrics.
  // Before: two columns of 30 x 22 px bands, three rows of 660 px panels (2,205 px drawn).
  std::vector<IntervalPoint> change;
  for (const char* m : {"SLO attainment", "goodput (req/s)", "p90 TTFT (ms)", "p90 TPOT (ms)", "mean step (ms)"}) {
    for (const char* policy : {"eplb", "gem", "vibe", "director", "metro", "grace"}) {
      for (const int rate : {220, 240, 260, 280, 300}) {
        change.push_back({m, fmt::format("{}, workload.rate_rps={}", policy, rate), 1.0, 0.5, 1.5});
      }
    }
  }
  const Figure f = interval_chart({"v", "T", "C"}, {}, change);
  // Labels of up to 31 characters: 7 x 31 + 16 = 233 px; panels of 230 px and gaps of 28 px:
  // (1,100 - 233 + 28) / 258 = 3 columns, 2 rows; bands (1,200 - 2 x 84) / (2 x 30) = 17 px.
  const auto& first = f.spec["marks"][0];
  const auto& rest = f.spec["marks"][1];
  REQUIRE(first["encode"]["enter"]["x"]["signal"] == "(datum.order % 3) * 258");
  REQUIRE(first["encode"]["enter"]["y"]["signal"] == "floor(datum.order / 3) * 594");
  REQUIRE(first["encode"]["enter"]["height"]["value"] == 30 * 17);
  REQUIRE(2 * (30 * 17 + 84) <= k_figure_max_height_px);
  REQUIRE(233 + 2 * 28 + 3 * 230 <= k_figure_max_width_px);
  // The category labels once per row (first column), grid lines in every panel.
  REQUIRE(first["axes"].size() == 3);
  REQUIRE(rest["axes"].size() == 2);
  REQUIRE(f.spec["data"][1]["transform"][0]["expr"] == "datum.order % 3 === 0");
  // 40 categories, the recovery figure's limit: bands at their 12 px floor.
  change.resize(0);
  for (int i = 0; i < 40; ++i) {
    change.push_back({"m", fmt::format("point {}", i), 1.0, std::nullopt, std::nullopt});
  }
  const Figure tall = interval_chart({"t", "T", "C"}, {}, change);
  REQUIRE(tall.spec["marks"][0]["encode"]["enter"]["height"]["value"] == 22 * 40);
}

TEST_CASE("the runs table adds the prefix-cache columns only when a run reports them") {
  RunInput plain;
  plain.label = "plain";
  plain.summary = nlohmann::json::parse(R"({"metrics": {"requests_finished": 10}})");
  RunInput cached = plain;
  cached.label = "cached";
  cached.summary["metrics"]["prefix_cache"] = {{"hit_rate_tokens", 0.563}, {"hit_rate_requests", 0.9}};
  const std::string without = runs_metrics_table({plain});
  REQUIRE(without.find("prefix hit rate") == std::string::npos);
  const std::string with = runs_metrics_table({plain, cached});
  REQUIRE(with.find("<th>prefix hit rate (tokens)</th><th>prefix hit rate (requests)</th></tr>") != std::string::npos);
  REQUIRE(with.find("<td>0.563</td><td>0.9</td></tr>") != std::string::npos);
  REQUIRE(with.find("<td>-</td><td>-</td></tr>") != std::string::npos);  // the plain run has none
}

TEST_CASE("the runs table shows accepted drafts per verify when speculative decoding was on") {
  RunInput on;
  on.label = "mtp";
  on.summary = nlohmann::json::parse(R"({"metrics": {"speculative.mean_accepted_tokens": 1.2799, "steps": 3}})");
  RunInput off;
  off.label = "plain";
  off.summary = nlohmann::json::parse(R"({"metrics": {"steps": 3}})");
  const std::string html = runs_metrics_table({on, off});
  REQUIRE(html.find("<th>accepted drafts</th>") != std::string::npos);
  // 4 significant digits for the run that drafted, "-" for the one that did not (its last cell).
  REQUIRE(html.find("<td>1.28</td></tr>") != std::string::npos);
  REQUIRE(html.find("<td>plain</td>") != std::string::npos);
  REQUIRE(html.rfind("<td>-</td></tr>") > html.find("<td>plain</td>"));
}

TEST_CASE("a study's section says what the sweep cost in CPU time, when study.json has it") {
  const fs::path dir = old_study(fs::temp_directory_path() / "epsim-report-cpu");
  // Written before issue 40: no CPU times, no line.
  REQUIRE_THAT(build_report(load_report_inputs({dir}), "t", "epsim test").sections.at(0).intro_html,
               !Contains("CPU s"));
  std::ofstream(dir / "study.json")
      << R"({"kind": "compare", "replications": 2, "baseline": "policy=linear", "rate_axis": "workload.rate_rps",
  "slo_target": 0.9, "report": ["slo.attainment", "ttft_ms.p90"],
  "axes": [{"name": "policy"}, {"name": "workload.rate_rps"}],
  "timings": {"wall_s": 30.04, "cpu_s": 12.46, "run_wall_s_total": 50.0, "run_cpu_s_total": 40.24, "reused_runs": 0}})";
  REQUIRE_THAT(build_report(load_report_inputs({dir}), "t", "epsim test").sections.at(0).intro_html,
               Contains("Cost: 12.5 CPU s for the sweep that wrote these results (30.0 s wall); its runs, journal "
                        "reuses included, 40.2 CPU s."));
  fs::remove_all(dir);
}
