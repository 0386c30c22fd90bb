// SPDX-License-Identifier: Apache-2.0
#pragma once
// `epsim place`: compute a placement outside a simulation, for any placement policy in the registry, from
// a load file; write it in epsim's format (phy2log, log2phy, logcnt as DeepSeek's EPLB names them, plus
// the predicted per-GPU load) or as the three maps vLLM's EPLB state holds.
#include <ostream>
#include <string>
#include <vector>

namespace epsim::experiments {

/// Throws std::invalid_argument for usage errors and core::Error for bad input files.
int place_command(const std::vector<std::string>& args, std::ostream& out);

}  // namespace epsim::experiments
