// SPDX-License-Identifier: Apache-2.0
#pragma once
// `epsim calibrate import FORMAT FILE... --out TABLE.csv`: converts what a profiler or benchmark wrote
// into a measurement table (calibration/importers.hpp lists the formats). Usage errors are
// std::invalid_argument naming the option; a bad input file is core::Error naming its file and line.
#include <iosfwd>
#include <string>
#include <vector>

namespace epsim::experiments {

/// `args` are the arguments after `import`. Writes the table to --out atomically, a one-line summary to
/// `out`, and what the importer skipped to `err`.
int calibrate_import_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

/// `epsim calibrate import --help`: usage, the formats, the options.
std::string calibrate_import_help();

}  // namespace epsim::experiments
