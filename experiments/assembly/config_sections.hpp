// SPDX-License-Identifier: Apache-2.0
#pragma once
// The readers of the experiment sections that experiments/ owns ([run], [output]), shared by the
// config loader and by document_config(), which runs them in documentation mode.
#include <cstdint>
#include <optional>

#include "core/params.hpp"
#include "experiments/assembly/experiment_config.hpp"

namespace epsim::experiments {

/// What [run] says.
struct RunSettings {
  std::uint64_t seed = 42;
  std::optional<std::uint64_t> workload_seed;
  std::optional<std::uint64_t> cluster_seed;
  double max_sim_time_s = 3600.0;
};

/// Reads and finishes [run] of `root`.
RunSettings parse_run_section(core::ParamTable& root);

/// Reads and finishes [output] of `root`.
OutputsConfig parse_outputs(core::ParamTable& root);

}  // namespace epsim::experiments
