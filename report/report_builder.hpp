// SPDX-License-Identifier: Apache-2.0
#pragma once
// Decides what a report shows: a section per study directory (its figures, the headline table with
// intervals, max-rate and ranking tables, the resolved study) and one for the run directories (CDFs,
// per-run heat maps and time series, headline metrics, each resolved configuration).
#include <string>

#include "report/html_page.hpp"
#include "report/report_inputs.hpp"

namespace epsim::report {

Report build_report(const ReportInputs& inputs, const std::string& title, const std::string& generator);

}  // namespace epsim::report
