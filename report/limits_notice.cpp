// SPDX-License-Identifier: Apache-2.0
#include "report/limits_notice.hpp"

#include <fmt/format.h>

#include <array>
#include <map>
#include <utility>

#include "report/tables.hpp"

namespace epsim::report {
namespace {

// summary.json's cap names and the settings behind them.
constexpr std::array<std::pair<const char*, const char*>, 3> k_caps = {
    {{"seats", "scheduler.max_running_requests"},
     {"batch_tokens", "scheduler.max_batch_tokens"},
     {"kv_cache", "the KV cache, scheduler.gpu_memory_utilization"}}};

std::string wrap(const std::vector<std::string>& items) {
  if (items.empty()) {
    return "";
  }
  std::string out =
      "<div class=\"limits\"><p><strong>Limited by a configured cap.</strong> While requests waited, a cap held "
      "back admissions (share of the measured steps x DP ranks): these numbers measure the setting, not the "
      "hardware; raise it or state it.</p>\n<ul>\n";
  for (const std::string& i : items) {
    out += "<li>" + i + "</li>\n";
  }
  return out + "</ul></div>\n";
}

}  // namespace

std::string study_limits_html(const StudyInput& s) {
  const std::size_t metric = s.points.column("metric");
  const std::size_t mean = s.points.column("mean");
  double threshold = 0.0;
  for (std::size_t r = 0; r < s.points.rows(); ++r) {
    if (s.points.text(r, metric) == "limits.threshold") {
      threshold = s.points.number(r, mean);
    }
  }
  if (!(threshold > 0.0)) {
    return "";  // written before issue 35: no limits recorded
  }
  // Per point (its points.csv row for the label): the caps at or above the threshold.
  std::map<int, std::pair<std::size_t, std::vector<std::string>>> found;
  const std::size_t point = s.points.column("point");
  for (std::size_t r = 0; r < s.points.rows(); ++r) {
    const std::string& m = s.points.text(r, metric);
    for (const auto& [cap, setting] : k_caps) {
      const bool offered = m == fmt::format("limits.{}.binding_fraction", cap);
      const bool search = m == fmt::format("max_rate_limits.{}.binding_fraction", cap);
      const auto v = s.points.maybe_number(r, mean);
      if ((offered || search) && v.has_value() && *v >= threshold) {
        auto& [row, caps] = found[static_cast<int>(s.points.number(r, point))];
        row = r;
        caps.push_back(fmt::format("{} ({}) bound {:.0f} % {}", cap, setting, 100.0 * *v,
                                   offered ? "at the offered load" : "at the max-rate search's first missed rate"));
      }
    }
  }
  std::vector<std::string> items;
  for (const auto& [p, entry] : found) {
    std::string caps;
    for (const std::string& c : entry.second) {
      caps += (caps.empty() ? "" : "; ") + c;
    }
    items.push_back(html_escape(fmt::format("point {} ({}): {}", p, point_label(s, entry.first), caps)));
  }
  return wrap(items);
}

std::string runs_limits_html(const std::vector<RunInput>& runs) {
  std::vector<std::string> items;
  for (const RunInput& run : runs) {
    const nlohmann::json& limits =
        run.summary.value("metrics", nlohmann::json::object()).value("limits", nlohmann::json::object());
    if (!limits.is_object() || !limits.contains("limited_by") || !limits["limited_by"].is_array()) {
      continue;
    }
    std::string caps;
    for (const auto& [cap, setting] : k_caps) {
      for (const nlohmann::json& named : limits["limited_by"]) {
        if (named.is_string() && named.get<std::string>() == cap && limits.contains(cap) && limits[cap].is_object()) {
          const double f = limits[cap].value("binding_fraction", 0.0);
          caps += fmt::format("{}{} ({}) bound {:.0f} %", caps.empty() ? "" : "; ", cap, setting, 100.0 * f);
        }
      }
    }
    if (!caps.empty()) {
      items.push_back(html_escape(fmt::format("{}: {}", run.label, caps)));
    }
  }
  return wrap(items);
}

}  // namespace epsim::report
