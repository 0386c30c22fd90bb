// SPDX-License-Identifier: Apache-2.0
#pragma once
// What `epsim place` reads besides an engine's recording: epsim's own load files (JSON weight/window, CSV
// layer,expert,tokens or step,layer,expert,tokens), co-selection counts and measured cost curves. Errors
// name the file and the line or position.
#include <filesystem>
#include <memory>
#include <vector>

#include "policies/cost_curves.hpp"

namespace epsim::experiments {

struct LoadFile {
  std::vector<std::vector<double>> weight;               // [layer][expert]
  std::vector<std::vector<std::vector<double>>> window;  // [step][layer][expert], when given step by step
  std::vector<double> coactivation;                      // [layer][expert][expert], when the source has it
  std::vector<double> transitions;                       // [layer][expert][expert], layers 0 .. L - 2, when asked
  int num_replicas = 0;
  int num_groups = 0;
  int num_nodes = 0;
  int num_gpus = 0;
};

/// JSON {"weight": [[...]]} and/or {"window": [[[...]]]} per step, with optional num_* keys.
LoadFile read_load_json(const std::filesystem::path& path);
/// CSV layer,expert,tokens or step,layer,expert,tokens.
LoadFile read_load_csv(const std::filesystem::path& path);
/// Co-selection counts (GRACE's affinity): CSV layer,expert_a,expert_b,tokens, summed symmetrically into
/// [layer][expert][expert].
std::vector<double> read_coactivation(const std::filesystem::path& path, int layers, int experts);
/// Measured C_g(n): CSV gpu,tokens,latency_us, one row per sample point.
std::shared_ptr<const policies::CostCurves> read_curves(const std::filesystem::path& path, int gpus);

}  // namespace epsim::experiments
