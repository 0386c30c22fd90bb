// SPDX-License-Identifier: Apache-2.0
#include "report/report_inputs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "core/csv_lines.hpp"
#include "core/error.hpp"
#include "core/file_kind.hpp"
#include "core/json_depth.hpp"

namespace epsim::report {
namespace {

namespace fs = std::filesystem;

nlohmann::json read_json(const fs::path& path) {
  core::check_input_file(path);  // a FIFO would block the report forever
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw core::Error(fmt::format("{}: cannot open", path.string()));
  }
  const std::string text = core::read_json_text(in, path.string());
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // syntax, or a number past double's range
    throw core::Error(fmt::format("{}: not valid JSON: {}", path.string(), e.what()));
  }
}

std::optional<CsvTable> optional_csv(const fs::path& path) {
  if (!fs::exists(path)) {
    return std::nullopt;
  }
  return CsvTable::load(path);
}

std::string string_or(const nlohmann::json& j, const char* key, const std::string& fallback) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

// The number of a level of the rate axis: its "value" (written since issue 35), else the one number
// its overrides set (older study.json files).
std::optional<double> level_number(const nlohmann::json& level) {
  if (level.contains("value") && level["value"].is_number()) {
    return level["value"].get<double>();
  }
  const nlohmann::json* at = level.contains("set") ? &level["set"] : nullptr;
  for (int depth = 0; at != nullptr && depth < 64; ++depth) {
    if (at->is_number()) {
      return at->get<double>();
    }
    at = at->is_object() && at->size() == 1 ? &at->begin().value() : nullptr;
  }
  return std::nullopt;
}

void rate_levels(const nlohmann::json& axes, const std::string& where, StudyInput& s) {
  for (const auto& a : axes) {
    if (!a.is_object() || string_or(a, "name", "") != s.rate_axis || !a.contains("levels")) {
      continue;
    }
    if (!a["levels"].is_array()) {
      throw core::Error(fmt::format("{}: axes: \"levels\" of \"{}\" is not a list", where, s.rate_axis));
    }
    for (const auto& level : a["levels"]) {
      if (const auto v = level.is_object() ? level_number(level) : std::nullopt; v) {
        s.rate_values[string_or(level, "label", "")] = *v;
      }
    }
  }
}

StudyInput load_study(const fs::path& dir, const std::string& label) {
  StudyInput s{dir,
               label,
               read_json(dir / "study.json"),
               CsvTable::load(dir / "runs.csv"),
               CsvTable::load(dir / "points.csv"),
               optional_csv(dir / "scaling.csv"),
               optional_csv(dir / "distribution.csv"),
               optional_csv(dir / "max_rate.csv"),
               optional_csv(dir / "ranking.csv"),
               optional_csv(dir / "rebalance.csv"),
               optional_csv(dir / "break_even.csv"),
               {},
               {},
               {},
               {},
               {},
               0.9,
               {},
               {}};
  const nlohmann::json& j = s.study;
  const std::string where = (dir / "study.json").string();
  if (!j.is_object() || !j.contains("axes") || !j["axes"].is_array() || !j.contains("kind")) {
    throw core::Error(
        fmt::format("{}: expected a study description (\"kind\", \"axes\"), as epsim sweep writes", where));
  }
  for (const auto& a : j["axes"]) {
    s.axes.push_back(string_or(a, "name", ""));
  }
  s.kind = string_or(j, "kind", "grid");
  s.rate_axis = string_or(j, "rate_axis", "");
  s.baseline = string_or(j, "baseline", "");
  if (j.contains("slo_target") && j["slo_target"].is_number()) {
    s.slo_target = j["slo_target"].get<double>();
  }
  if (j.contains("report") && j["report"].is_array()) {
    for (const auto& m : j["report"]) {
      if (!m.is_string()) {
        throw core::Error(fmt::format("{}: report: expected a list of metric names", where));
      }
      s.report_metrics.push_back(m.get<std::string>());
    }
  }
  rate_levels(j["axes"], where, s);
  // study.json names its report metrics since issue 15; older ones get the usual headline metrics.
  if (s.report_metrics.empty()) {
    for (const char* m : {"ttft_ms.p90", "tpot_ms.p90", "slo.attainment", "mean_step_ms", "straggler_gap_us.mean"}) {
      if (s.runs.has(m)) {
        s.report_metrics.emplace_back(m);
      }
    }
  }
  for (const std::string& a : s.axes) {
    if (!s.points.has(a)) {
      throw core::Error(fmt::format("{}: no column for the study's axis \"{}\"", s.points.source(), a));
    }
  }
  const fs::path runs_dir = dir / "runs";
  if (fs::is_directory(runs_dir)) {
    for (const auto& e : fs::directory_iterator(runs_dir)) {
      const std::string name = e.path().filename().string();
      int point = 0;
      int rep = 0;
      // pPPPP-rRRR, as the study runner names them.
      if (e.is_directory() && std::sscanf(name.c_str(), "p%d-r%d", &point, &rep) == 2 &&
          fs::exists(e.path() / "requests.csv")) {
        s.saved_runs.push_back({e.path(), point});
      }
    }
    std::sort(s.saved_runs.begin(), s.saved_runs.end(),
              [](const StudyInput::SavedRun& a, const StudyInput::SavedRun& b) { return a.dir < b.dir; });
  }
  return s;
}

}  // namespace

RunInput load_run(const fs::path& dir, const std::string& label) {
  RunInput r{dir,
             label,
             read_json(dir / "summary.json"),
             optional_csv(dir / "requests.csv"),
             optional_csv(dir / "steps.csv"),
             optional_csv(dir / "events.csv"),
             optional_csv(dir / "gpu_layers.csv")};
  if (!r.summary.is_object() || !r.summary.contains("metrics")) {
    throw core::Error(fmt::format("{}: expected a run summary with \"metrics\", as epsim run writes",
                                  (dir / "summary.json").string()));
  }
  return r;
}

ReportInputs load_report_inputs(const std::vector<fs::path>& dirs) {
  ReportInputs in;
  std::map<std::string, int> seen;
  for (const fs::path& d : dirs) {
    if (!fs::is_directory(d)) {
      throw core::Error(fmt::format("{}: not a directory (expected a study or run directory)", d.string()));
    }
    // Labels are directory names, numbered when two inputs share one.
    std::string label = fs::absolute(d).lexically_normal().filename().string();
    if (label.empty()) {
      label = fs::absolute(d).lexically_normal().parent_path().filename().string();
    }
    const int n = ++seen[label];
    if (n > 1) {
      label += fmt::format(" ({})", n);
    }
    if (fs::exists(d / "study.json")) {
      in.studies.push_back(load_study(d, label));
    } else if (fs::exists(d / "summary.json")) {
      in.runs.push_back(load_run(d, label));
    } else {
      throw core::Error(fmt::format(
          "{}: neither a study directory (no study.json, see epsim sweep) nor a run directory (no summary.json, "
          "see epsim run)",
          d.string()));
    }
  }
  return in;
}

double rate_value(const StudyInput& s, std::size_t row) {
  const std::string& cell = s.points.text(row, s.points.column(s.rate_axis));
  double v = 0.0;
  if (core::parse_number(cell, v)) {
    return v;
  }
  const auto it = s.rate_values.find(cell);
  if (it == s.rate_values.end()) {
    throw core::Error(
        fmt::format("{}: the rate axis \"{}\" has the level \"{}\", which is no number, and study.json "
                    "gives no rate for it",
                    s.points.source(), s.rate_axis, cell));
  }
  return it->second;
}

std::string point_label(const StudyInput& s, std::size_t row, const std::string& skip_axis) {
  std::string label;
  for (const std::string& a : s.axes) {
    if (a == skip_axis) {
      continue;
    }
    if (!label.empty()) {
      label += ", ";
    }
    // Named axes (policy, setup) read by their labels; config-key axes need the key: "rate_rps=40".
    const auto dot = a.rfind('.');
    if (dot != std::string::npos) {
      label += a.substr(dot + 1);
      label += '=';
    }
    label += s.points.text(row, s.points.column(a));
  }
  return label.empty() ? "all" : label;
}

}  // namespace epsim::report
