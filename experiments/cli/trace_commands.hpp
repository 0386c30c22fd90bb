// SPDX-License-Identifier: Apache-2.0
#pragma once
// `epsim trace gen | stats | convert`: make, inspect and convert routing traces.
#include <ostream>
#include <string>
#include <vector>

namespace epsim::experiments {

/// Runs `epsim trace ...` with `args` after "trace"; returns the exit code (throws core::Error /
/// core::ConfigError like the other commands, and std::invalid_argument for usage errors).
int trace_command(const std::vector<std::string>& args, std::ostream& out);

}  // namespace epsim::experiments
