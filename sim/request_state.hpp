// SPDX-License-Identifier: Apache-2.0
#pragma once
// A request's progress through the engine.
#include <vector>

#include "core/time.hpp"
#include "sim/block_hash.hpp"
#include "workloads/request.hpp"

namespace epsim::serving {

struct RequestState {
  workloads::RequestSpec spec;
  int group = 0;                    ///< EP group serving it
  int rank = 0;                     ///< DP attention rank (GPU within the group) that owns it
  std::int64_t prefilled = 0;       ///< tokens of the current (re)computation already processed
  std::int64_t prefill_target = 0;  ///< tokens to (re)compute before the next token: the prompt, or after a
                                    ///< recompute preemption the prompt + the tokens generated so far
  std::int64_t generated = 0;       ///< output tokens emitted
  std::int64_t kv_blocks = 0;       ///< KV-cache blocks held
  int preemptions = 0;
  /// Prefix cache (prefix_cache.hpp): prompt tokens its first admission found cached (-1: not admitted
  /// on a rank with a cache), the blocks it references in its rank's cache (its first cache_slots.size()
  /// blocks), how far its blocks are keyed, and when blocks fetched from a slower tier have landed.
  std::int64_t cached_tokens = -1;
  std::vector<std::int32_t> cache_slots = {};
  BlockCursor cursor = {};
  core::Time ready_ns = 0;
  bool rejected = false;  ///< could never fit in its rank's KV cache
  core::Time first_token_ns = -1;
  core::Time last_token_ns = -1;
  core::Time finish_ns = -1;

  bool prefill_done() const { return prefilled >= prefill_target; }
  bool finished() const { return finish_ns >= 0; }
  double ttft_ms() const { return core::to_ms(first_token_ns - spec.arrival_ns); }
  double e2e_ms() const { return core::to_ms(finish_ns - spec.arrival_ns); }
  /// Mean time per output token after the first; 0 for single-token answers.
  double tpot_ms() const {
    return spec.output_tokens > 1
               ? core::to_ms(finish_ns - first_token_ns) / static_cast<double>(spec.output_tokens - 1)
               : 0.0;
  }
};

}  // namespace epsim::serving
