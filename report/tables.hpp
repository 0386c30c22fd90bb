// SPDX-License-Identifier: Apache-2.0
#pragma once
// The report's tables as HTML fragments: headline metrics with their intervals (a study's points over
// replications; a run's own percentiles), any CSV as a table, and a resolved configuration.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/csv_table.hpp"
#include "report/report_inputs.hpp"

namespace epsim::report {

std::string html_escape(const std::string& text);

/// Each point (row) x report metric (column): mean [95 % interval] over replications.
std::string study_metrics_table(const StudyInput& study);

/// One row per run: requests, TTFT / TPOT / E2E percentiles, attainment, goodput, step and straggler
/// figures from each summary.json.
std::string runs_metrics_table(const std::vector<RunInput>& runs);

/// A CSV as a table (at most `max_rows` rows; the rest counted).
std::string csv_table_html(const CsvTable& table, std::size_t max_rows);

/// A JSON document, pretty-printed and escaped, in a collapsible block.
std::string json_block(const std::string& summary, const nlohmann::json& doc);

}  // namespace epsim::report
