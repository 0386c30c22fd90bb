// SPDX-License-Identifier: Apache-2.0
#pragma once
// `epsim sweep STUDY.toml --out DIR [-j N]`: plans the study, skips the runs the journal already holds,
// runs the rest on N threads (and across MPI ranks under mpirun), then writes the outputs from every
// run's record. docs/studies.md describes the study file and the outputs.
#include <ostream>
#include <string>
#include <vector>

namespace epsim::experiments {

int sweep_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace epsim::experiments
