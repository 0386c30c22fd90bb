// SPDX-License-Identifier: Apache-2.0
#pragma once
// The work of one engine step: for every DP rank, which requests advance and by how many tokens. The
// buffers are reused from step to step (clear() keeps capacity).
#include <cstdint>
#include <vector>

namespace epsim::serving {

struct BatchEntry {
  int request = 0;           ///< index into the simulator's request table
  std::int64_t tokens = 0;   ///< new tokens this step (prefill chunk, or 1 for a decode)
  std::int64_t context = 0;  ///< tokens already in the request's KV cache before this step
  bool prefill = false;
  bool emits_token = false;  ///< decode, or the chunk that completes the prompt
};

struct Batch {
  std::vector<BatchEntry> entries;  ///< grouped by rank
  std::vector<int> rank_begin;      ///< entries of rank r: [rank_begin[r], rank_begin[r + 1])
  std::int64_t prefill_tokens = 0;
  std::int64_t decode_tokens = 0;
  std::int64_t cached_tokens = 0;  ///< prompt tokens this step's admissions found in a prefix cache

  void clear(int ranks) {
    entries.clear();
    rank_begin.assign(static_cast<std::size_t>(ranks) + 1, 0);
    prefill_tokens = 0;
    decode_tokens = 0;
    cached_tokens = 0;
  }
  bool empty() const { return entries.empty(); }
};

}  // namespace epsim::serving
