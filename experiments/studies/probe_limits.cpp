// SPDX-License-Identifier: Apache-2.0
#include "experiments/studies/probe_limits.hpp"

#include <fmt/format.h>

#include <cmath>

namespace epsim::experiments {

serving::CapTally caps_at_first_miss(const SloSearchResult& r, double target) {
  const SloProbe* pick = nullptr;
  for (const SloProbe& p : r.probes) {  // sorted by rate
    if (p.summary.slo_attainment < target && (pick == nullptr || p.rate_rps < pick->rate_rps)) {
      pick = &p;
    }
  }
  if (pick == nullptr && !r.probes.empty()) {
    pick = &r.probes.back();
  }
  return pick != nullptr ? pick->summary.caps : serving::CapTally{};
}

void append_probe_limits(const serving::CapTally& caps, NamedValues& out) {
  for (const serving::AdmissionCap c : serving::k_admission_caps) {
    out.emplace_back("max_rate_limits." + std::string(serving::cap_name(c)) + ".binding_fraction",
                     caps.binding_fraction(c));
  }
}

std::string study_limits_text(const StudyPlan& plan, const std::vector<RunRecord>& records) {
  std::string out;
  for (const StudyPoint& p : plan.points) {
    std::string caps;
    for (const serving::AdmissionCap c : serving::k_admission_caps) {
      for (const char* where : {"limits", "max_rate_limits"}) {
        const std::string name = fmt::format("{}.{}.binding_fraction", where, serving::cap_name(c));
        double sum = 0.0;
        int n = 0;
        for (std::int64_t r = 0; r < plan.replications; ++r) {
          const double v =
              metric_value(records[static_cast<std::size_t>(p.index * plan.replications + r)].metrics, name);
          if (!std::isnan(v)) {
            sum += v;
            ++n;
          }
        }
        if (n > 0 && sum / n >= serving::k_cap_binding_threshold) {
          caps += fmt::format("{}{} ({}) bound {:.0f} % {}", caps.empty() ? "" : "; ", serving::cap_setting(c),
                              serving::cap_name(c), 100.0 * sum / n,
                              where == std::string_view("limits") ? "at the offered load"
                                                                  : "at the max-rate search's first missed rate");
        }
      }
    }
    if (!caps.empty()) {
      out += fmt::format("  point {} ({}): {}\n", p.index, fmt::join(p.labels, ", "), caps);
    }
  }
  return out.empty() ? out
                     : "\nlimited by a configured cap (of the measured steps x DP ranks, requests waiting; these "
                       "numbers measure the setting, not the hardware):\n" +
                           out;
}

}  // namespace epsim::experiments
