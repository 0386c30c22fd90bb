// SPDX-License-Identifier: Apache-2.0
#pragma once
// `epsim cost`: a model's per-layer cost curve on a GPU (cost_table.hpp), one kernel of any shape
// (shape_cost.hpp) or one collective (collective_cost.hpp), from presets or from an experiment's config.
#include <ostream>
#include <string>
#include <vector>

namespace epsim::experiments {

/// Throws UsageError (command_line.hpp) for usage errors, core::Error for bad configs and presets.
int cost_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace epsim::experiments
