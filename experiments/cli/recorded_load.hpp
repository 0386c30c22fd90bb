// SPDX-License-Identifier: Apache-2.0
#pragma once
// An engine's routing recording (or an epsim trace) as the load file `epsim place` places from: the steps of
// a window (--from-step, --window-steps) streamed through the format's importer, totalled per expert, kept
// step by step only for policies that score steps one by one (GEM), and tallied into co-selection counts
// when the recording has per-token ids (TensorRT-LLM's co-occurrence files otherwise), and into cross-layer
// transitions when asked.
#include <cstdint>
#include <filesystem>

#include "engines/recorded_routing.hpp"
#include "engines/routing_importers.hpp"
#include "experiments/cli/place_inputs.hpp"

namespace epsim::experiments {

struct RecordingWindow {
  std::int64_t from_step = 0;  ///< steps skipped first
  std::int64_t steps = 0;      ///< steps placed from (0 = every step after from_step)
  bool keep_steps = false;     ///< keep each step's loads (LoadFile::window), not only the total
  bool coactivation = false;   ///< tally co-selection counts
  bool transitions = false;    ///< tally cross-layer transitions
  /// Bytes the kept steps may take; a window past it is refused (choose --window-steps).
  std::int64_t max_bytes = std::int64_t{1} << 30;
};

/// Streams `path` through `importer` and returns the window's loads; throws core::Error naming the file
/// when the window is empty or too large, or when co-selection counts or transitions are asked of a recording without
/// them.
LoadFile load_recording(const std::filesystem::path& path, const engines::RoutingImporter& importer,
                        const engines::RoutingImportOptions& options, const RecordingWindow& window);

}  // namespace epsim::experiments
