// SPDX-License-Identifier: Apache-2.0
#pragma once
// `epsim accuracy [SUITE] [--out DIR] [-j N] [--quick] [--point NAME]...`: prices every point of the
// accuracy suite (accuracy_suite.hpp; no SUITE: the suite compiled into the binary), prints published
// against predicted per figure with the error, and the error in and out of sample apart; with --out, DIR
// holds accuracy.csv and accuracy.md (docs/accuracy.md's generated part), whole or not at all. Usage
// errors are std::invalid_argument naming the option.
#include <ostream>
#include <string>
#include <vector>

namespace epsim::experiments {

int accuracy_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace epsim::experiments
