// SPDX-License-Identifier: Apache-2.0
#pragma once
// `epsim report DIR... --out REPORT.html`: a self-contained HTML report of study and run directories,
// with every figure's SVG and CSV beside it (docs/reports.md); and the same for one run (`run --report`).
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

namespace epsim::experiments {

int report_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

/// The report of one run directory into DIR/report.html (epsim run --report). `results_dir` is where
/// the reader finds the run, which the report names and labels it by: a run written into a staging
/// directory and then swapped into place passes its target (default: `run_dir` itself).
std::filesystem::path write_run_report(const std::filesystem::path& run_dir, bool svg,
                                       const std::filesystem::path& results_dir = {});

}  // namespace epsim::experiments
