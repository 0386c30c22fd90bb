// SPDX-License-Identifier: Apache-2.0
#pragma once
// `epsim workload stats`: look at a request trace (any replay format) before replaying it.
#include <ostream>
#include <string>
#include <vector>

namespace epsim::experiments {

/// Runs `epsim workload ...` with `args` after "workload"; returns the exit code (throws core::Error for
/// a bad file, std::invalid_argument for usage errors).
int workload_command(const std::vector<std::string>& args, std::ostream& out);

}  // namespace epsim::experiments
