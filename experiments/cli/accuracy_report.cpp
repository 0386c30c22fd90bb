// SPDX-License-Identifier: Apache-2.0
#include "experiments/cli/accuracy_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "core/csv_lines.hpp"

namespace epsim::experiments {
namespace {

// 57674.3 -> "57,674"; 35.24 -> "35.24": whole numbers with thousands separators from 1,000, else 4
// significant digits.
std::string number_text(double v) {
  if (std::fabs(v) < 1000.0) {
    return fmt::format("{:.4g}", v);
  }
  const std::string digits = fmt::format("{:.0f}", std::fabs(v));
  std::string out = v < 0 ? "-" : "";
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) {
      out.push_back(',');
    }
    out.push_back(digits[i]);
  }
  return out;
}

std::string pct_text(double v) {
  return fmt::format("{:+.1f} %", v);
}

// Rows of measurement tables are grouped by point, table, family and regime.
bool per_row(const FigureResult& r) {
  return !r.table.empty();
}
const std::string& table_name(const FigureResult& r) {
  return r.table;
}

using Group = std::vector<const FigureResult*>;

// The figures per sample and quantity: the summary's rows, in the table and on the page alike.
std::map<std::tuple<Sample, Quantity>, Group> by_sample_and_quantity(std::span<const FigureResult> results) {
  std::map<std::tuple<Sample, Quantity>, Group> groups;
  for (const FigureResult& r : results) {
    groups[{r.sample, r.quantity}].push_back(&r);
  }
  return groups;
}

std::string summary_md(std::span<const FigureResult> results) {
  const auto groups = by_sample_and_quantity(results);
  std::string out =
      "| sample | quantity | figures | MAPE | worst | within target | target |\n"
      "| --- | --- | ---: | ---: | ---: | ---: | ---: |\n";
  for (const Sample s : {Sample::out, Sample::in}) {
    for (const auto& [key, g] : groups) {
      if (std::get<0>(key) != s) {
        continue;
      }
      const ErrorSummary e = summarise(g);
      out += fmt::format("| {} | {} | {} | {:.1f} % | {} | {} of {} | {:.0f} % |\n",
                         s == Sample::out ? "out of sample" : "in sample", quantity_name(std::get<1>(key)), e.figures,
                         e.mape_pct, pct_text(e.worst_pct), e.within, e.figures, e.target_pct);
    }
  }
  return out;
}

std::string figures_md(std::span<const FigureResult> results) {
  std::string out =
      "| point | GPU | phase | figure | published | epsim | error | sample |\n"
      "| --- | --- | --- | --- | ---: | ---: | ---: | --- |\n";
  for (const FigureResult& r : results) {
    if (per_row(r)) {
      continue;
    }
    out +=
        fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", r.point, r.gpu, phase_name(r.phase), r.figure,
                    number_text(r.published), number_text(r.predicted), pct_text(r.error_pct()), sample_name(r.sample));
  }
  return out;
}

std::string tables_md(std::span<const FigureResult> results) {
  std::map<std::tuple<std::string, std::string, std::string, std::string>, Group> groups;
  std::vector<std::tuple<std::string, std::string, std::string, std::string>> order;
  for (const FigureResult& r : results) {
    if (!per_row(r)) {
      continue;
    }
    const auto key = std::make_tuple(r.point, table_name(r), r.family, r.regime);
    if (groups.find(key) == groups.end()) {
      order.push_back(key);
    }
    groups[key].push_back(&r);
  }
  if (order.empty()) {
    return {};
  }
  std::string out =
      "| point | GPU | table | family | regime | rows | MAPE | worst | within target | sample |\n"
      "| --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: | --- |\n";
  for (const auto& key : order) {
    const Group& g = groups[key];
    const ErrorSummary e = summarise(g);
    const bool mixed =
        std::any_of(g.begin(), g.end(), [&](const FigureResult* r) { return r->sample != g.front()->sample; });
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {:.1f} % | {} | {} of {} | {} |\n", std::get<0>(key),
                       g.front()->gpu, std::get<1>(key), std::get<2>(key), std::get<3>(key), e.figures, e.mape_pct,
                       pct_text(e.worst_pct), e.within, e.figures, mixed ? "mixed" : sample_name(g.front()->sample));
  }
  return out;
}

std::string points_md(std::span<const PointSpec> points) {
  std::string out;
  for (const PointSpec& p : points) {
    out += fmt::format("- **{}** ({}, {}{}): {}. Source: {}.", p.name, p.gpu, phase_name(p.phase),
                       p.quick ? ", quick" : "", p.title, p.source);
    if (!p.unstated.empty()) {
      out += fmt::format(" Unstated, and how the setup chose it: {}.", fmt::join(p.unstated, "; "));
    }
    out += p.fitted.empty() ? " Nothing in epsim was fitted to it."
                            : fmt::format(" Fitted to it: {}.", fmt::join(p.fitted, "; "));
    out += "\n";
  }
  return out;
}

}  // namespace

ErrorSummary summarise(std::span<const FigureResult* const> results) {
  ErrorSummary e;
  double sum = 0.0;
  for (const FigureResult* r : results) {
    const double err = r->error_pct();
    sum += std::fabs(err);
    if (std::fabs(err) > std::fabs(e.worst_pct)) {
      e.worst_pct = err;
    }
    e.target_pct = std::max(e.target_pct, target_pct(r->quantity));
    e.within += std::fabs(err) <= target_pct(r->quantity) ? 1 : 0;
    ++e.figures;
  }
  e.mape_pct = e.figures > 0 ? sum / static_cast<double>(e.figures) : 0.0;
  return e;
}

std::string accuracy_csv(std::span<const FigureResult> results) {
  std::string out = "point,gpu,figure,published,predicted,error_pct,sample,phase,quantity,family,regime\n";
  for (const FigureResult& r : results) {
    out += fmt::format("{},{},{},{:.10g},{:.6g},{:.2f},{},{},{},{},{}\n", r.point, r.gpu, core::csv_quote(r.figure),
                       r.published, r.predicted, r.error_pct(), sample_name(r.sample), phase_name(r.phase),
                       quantity_name(r.quantity), core::csv_quote(r.family), r.regime);
  }
  return out;
}

std::string accuracy_table(std::span<const FigureResult> results) {
  std::string out = fmt::format("{:<32} {:<6} {:<44} {:>12} {:>12} {:>9} {}\n", "point", "gpu", "figure", "published",
                                "epsim", "error", "sample");
  std::map<std::tuple<std::string, std::string, std::string, std::string>, Group> tables;
  for (const FigureResult& r : results) {
    if (per_row(r)) {
      tables[{r.point, table_name(r), r.family, r.regime}].push_back(&r);
      continue;
    }
    out +=
        fmt::format("{:<32} {:<6} {:<44} {:>12} {:>12} {:>9} {}\n", r.point, r.gpu, r.figure, number_text(r.published),
                    number_text(r.predicted), pct_text(r.error_pct()), sample_name(r.sample));
  }
  if (!tables.empty()) {
    out += fmt::format("\n{:<32} {:<24} {:<24} {:<9} {:>5} {:>9} {:>9}\n", "table point", "table", "family", "regime",
                       "rows", "MAPE", "worst");
    for (const auto& [key, g] : tables) {
      const ErrorSummary e = summarise(g);
      out += fmt::format("{:<32} {:<24} {:<24} {:<9} {:>5} {:>7.1f} % {:>9}\n", std::get<0>(key), std::get<1>(key),
                         std::get<2>(key), std::get<3>(key), e.figures, e.mape_pct, pct_text(e.worst_pct));
    }
  }
  const auto groups = by_sample_and_quantity(results);
  out += fmt::format("\n{:<14} {:<11} {:>7} {:>9} {:>9} {:>14}\n", "sample", "quantity", "figures", "MAPE", "worst",
                     "within target");
  for (const Sample s : {Sample::out, Sample::in}) {
    for (const auto& [key, g] : groups) {
      if (std::get<0>(key) == s) {
        const ErrorSummary e = summarise(g);
        out += fmt::format("{:<14} {:<11} {:>7} {:>7.1f} % {:>9} {:>6} of {:<4} (target {:.0f} %)\n",
                           s == Sample::out ? "out of sample" : "in sample", quantity_name(std::get<1>(key)), e.figures,
                           e.mape_pct, pct_text(e.worst_pct), e.within, e.figures, e.target_pct);
      }
    }
  }
  return out;
}

std::string accuracy_markdown(std::span<const PointSpec> points, std::span<const FigureResult> results) {
  std::string out = "### Summary\n\n" + summary_md(results) + "\n### Figures\n\n" + figures_md(results);
  if (const std::string t = tables_md(results); !t.empty()) {
    out += "\n### Measurement tables, per family and regime\n\n" + t;
  }
  out += "\n### Points\n\n" + points_md(points);
  return out;
}

}  // namespace epsim::experiments
