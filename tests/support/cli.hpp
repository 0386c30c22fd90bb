// SPDX-License-Identifier: Apache-2.0
#pragma once
// Runs the epsim command line in-process and keeps its exit code and both streams.
#include <sstream>
#include <string>
#include <vector>

#include "experiments/cli/cli.hpp"

namespace epsim::test {

struct Cli {
  int code;
  std::string out;
  std::string err;
};

inline Cli cli(const std::vector<std::string>& args) {
  std::ostringstream out;
  std::ostringstream err;
  const int code = experiments::run_cli(args, out, err);
  return {code, out.str(), err.str()};
}

}  // namespace epsim::test
