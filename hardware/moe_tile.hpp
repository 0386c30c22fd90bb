// SPDX-License-Identifier: Apache-2.0
#pragma once
// The grouped-GEMM tile of an MoE call: every expert's tokens are padded up to a multiple of it, and the
// tile itself depends on the size of the GPU's whole call (vLLM picks its kernel config by M).
#include <cstdint>

namespace epsim::hardware {

/// vLLM's default grouped-GEMM tile rule: an MoE call of M token-expert pairs pads every expert's tokens
/// to `small` when M <= threshold (0: the call's local expert count, vLLM's M <= E), else to `large`.
/// Kept apart from GpuSpec so a caller pricing many calls reads it once per GPU, not per call.
struct MoeTileRule {
  std::int64_t small = 16;
  std::int64_t large = 64;
  std::int64_t threshold = 0;

  /// The largest call (token-expert pairs) that takes the small tile.
  std::int64_t limit(std::int64_t local_experts) const { return threshold > 0 ? threshold : local_experts; }
  std::int64_t tile(std::int64_t m_tokens, std::int64_t local_experts) const {
    return m_tokens <= limit(local_experts) ? small : large;
  }
};

/// Rounds `tokens` up to a multiple of `tile` (0 stays 0).
inline std::int64_t pad_to_tile(std::int64_t tokens, std::int64_t tile) {
  if ((tile & (tile - 1)) == 0) {  // the usual tiles: a mask, not a division per expert
    return (tokens + tile - 1) & ~(tile - 1);
  }
  return (tokens + tile - 1) / tile * tile;
}

}  // namespace epsim::hardware
