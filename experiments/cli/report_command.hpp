#pragma once
// `epsim report DIR... --out REPORT.html`: a self-contained HTML report of study and run directories,
// with every figure's SVG and CSV beside it (docs/reports.md); and the same for one run (`run --report`).
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

namespace epsim::experiments {

int report_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

/// The report of one run directory into DIR/report.html (epsim run --report).
/// `name` labels the run (default: the directory's name; a staged directory passes its target's).
std::filesystem::path write_run_report(const std::filesystem::path& run_dir, bool svg, const std::string& name = {});

}  // namespace epsim::experiments
