// SPDX-License-Identifier: Apache-2.0
#include "report/request_samples.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace epsim::report {

void RequestSamples::append(const RequestSamples& other) {
  ttft_ms.insert(ttft_ms.end(), other.ttft_ms.begin(), other.ttft_ms.end());
  tpot_ms.insert(tpot_ms.end(), other.tpot_ms.begin(), other.tpot_ms.end());
  e2e_ms.insert(e2e_ms.end(), other.e2e_ms.begin(), other.e2e_ms.end());
}

RequestSamples request_samples(const CsvTable& requests, const nlohmann::json& summary) {
  double warmup_s = 0.0;
  double cooldown_s = 0.0;
  const auto& window = summary.value("metrics", nlohmann::json::object()).value("window", nlohmann::json::object());
  warmup_s = window.value("warmup_s", 0.0);
  cooldown_s = window.value("cooldown_s", 0.0);
  const std::size_t arrival = requests.column("arrival_ns");
  const std::size_t out_tokens = requests.column("output_tokens");
  const std::size_t ttft = requests.column("ttft_ms");
  const std::size_t tpot = requests.column("tpot_ms");
  const std::size_t e2e = requests.column("e2e_ms");
  double last_arrival_ns = 0.0;
  for (std::size_t r = 0; r < requests.rows(); ++r) {
    last_arrival_ns = std::max(last_arrival_ns, requests.number(r, arrival));
  }
  // Integer nanoseconds as the engine compares them (metrics.cpp's MeasuredWindow).
  const auto begin_ns = static_cast<double>(std::llround(warmup_s * 1e9));
  const double end_ns =
      cooldown_s > 0.0 ? last_arrival_ns - static_cast<double>(std::llround(cooldown_s * 1e9)) : INFINITY;
  RequestSamples s;
  for (std::size_t r = 0; r < requests.rows(); ++r) {
    const double a = requests.number(r, arrival);
    if (a < begin_ns || a > end_ns) {
      continue;
    }
    const auto t = requests.maybe_number(r, ttft);
    const auto e = requests.maybe_number(r, e2e);
    if (!t.has_value() || !e.has_value()) {
      continue;  // not finished
    }
    s.ttft_ms.push_back(*t);
    s.e2e_ms.push_back(*e);
    const auto p = requests.maybe_number(r, tpot);
    if (p.has_value() && requests.number(r, out_tokens) > 1.0) {
      s.tpot_ms.push_back(*p);
    }
  }
  return s;
}

std::vector<std::pair<double, double>> ecdf(std::vector<double> values, std::size_t max_points) {
  std::sort(values.begin(), values.end());
  std::vector<std::pair<double, double>> out;
  const std::size_t n = values.size();
  if (n == 0) {
    return out;
  }
  const auto nd = static_cast<double>(n);
  if (n <= max_points || max_points < 2) {
    out.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      out.emplace_back(values[i], static_cast<double>(i + 1) / nd);
    }
    return out;
  }
  out.reserve(max_points);
  for (std::size_t k = 0; k < max_points; ++k) {
    // Rank (k / (m - 1)) of the way from the first to the last order statistic.
    const std::size_t i = (k * (n - 1)) / (max_points - 1);
    out.emplace_back(values[i], static_cast<double>(i + 1) / nd);
  }
  return out;
}

void append_ecdf_rows(const std::string& panel, const std::string& series, const std::vector<double>& values,
                      std::size_t max_points, std::vector<LinePoint>& rows) {
  for (const auto& [x, f] : ecdf(values, max_points)) {
    rows.push_back({panel, series, x, f, std::nullopt, std::nullopt});
  }
}

void append_latency_cdf_rows(const RequestSamples& samples, const std::string& series, std::size_t max_points,
                             std::vector<LinePoint>& rows) {
  append_ecdf_rows("TTFT (ms)", series, samples.ttft_ms, max_points, rows);
  append_ecdf_rows("TPOT (ms)", series, samples.tpot_ms, max_points, rows);
  append_ecdf_rows("E2E (ms)", series, samples.e2e_ms, max_points, rows);
}

}  // namespace epsim::report
