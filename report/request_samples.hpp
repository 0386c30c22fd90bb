// SPDX-License-Identifier: Apache-2.0
#pragma once
// Per-request latencies of a run (requests.csv), restricted to the requests its summary measured: those
// arriving in [warmup, last arrival - cooldown] (the window of summary.json), finished ones only, and
// TPOT only for requests of more than one output token, exactly as the summary's percentiles are made.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "report/csv_table.hpp"
#include "report/figure.hpp"

namespace epsim::report {

struct RequestSamples {
  std::vector<double> ttft_ms;
  std::vector<double> tpot_ms;
  std::vector<double> e2e_ms;
  void append(const RequestSamples& other);
};

RequestSamples request_samples(const CsvTable& requests, const nlohmann::json& summary);

/// The empirical CDF of `values` as at most `max_points` (x, F(x)) steps: every sample when there are
/// few, else the order statistics at evenly spaced ranks (first and last always kept).
std::vector<std::pair<double, double>> ecdf(std::vector<double> values, std::size_t max_points);

/// ecdf(values, max_points) as rows of panel `panel`, series `series`, appended to `rows`.
void append_ecdf_rows(const std::string& panel, const std::string& series, const std::vector<double>& values,
                      std::size_t max_points, std::vector<LinePoint>& rows);

/// The TTFT, TPOT and E2E panels of `samples` (series `series`), appended to `rows`.
void append_latency_cdf_rows(const RequestSamples& samples, const std::string& series, std::size_t max_points,
                             std::vector<LinePoint>& rows);

}  // namespace epsim::report
