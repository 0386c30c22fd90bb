// SPDX-License-Identifier: Apache-2.0
#pragma once
// The `epsim` command line: run, validate, list. Returns the process exit code (0 ok, 1 runtime
// failure, 2 usage or configuration error); never calls exit itself, so tests can drive it.
#include <ostream>
#include <string>
#include <vector>

namespace epsim::experiments {

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace epsim::experiments
