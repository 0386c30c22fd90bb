// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <string>

namespace epsim::experiments {

// `epsim --version`: "epsim 0.2.0 (commit 1a2b3c4)", the commit as built ("-dirty" when tracked files
// had changes, "unknown" outside a git checkout). Its own file: a new commit recompiles only this.
std::string version_text();

}  // namespace epsim::experiments
