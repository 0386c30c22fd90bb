// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where a disaggregated deployment sends a prefilled request: the decode group and DP rank that receive
// its KV cache. Each hand-off sees every decode rank's load *including the hand-offs already travelling
// to it*: a step that finishes many prompts at once must not send them all to the rank that looked
// least loaded before any of them landed (SGLang's and Dynamo's decode routers count them too).
// Policies are registered (`epsim list policies`) and chosen with `disaggregation.handoff`.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "policies/registry.hpp"

namespace epsim::serving {

/// One decode DP rank as the hand-off sees it.
struct DecodeRank {
  int group = 0;                     ///< its EP group
  int rank = 0;                      ///< its DP rank in the group
  std::int64_t outstanding = 0;      ///< requests waiting or running there
  std::int64_t incoming = 0;         ///< hand-offs on their way to it
  std::int64_t free_kv_tokens = 0;   ///< tokens its free KV blocks hold
  std::int64_t incoming_tokens = 0;  ///< context tokens of the hand-offs on their way
};

class HandoffRouter {
 public:
  virtual ~HandoffRouter() = default;
  /// The index in `ranks` (never empty) of the rank that receives a request of `context_tokens`.
  virtual std::size_t pick(std::span<const DecodeRank> ranks, std::int64_t context_tokens) = 0;
};

/// round_robin, least_loaded (the default) and kv_aware.
const policies::Registry<HandoffRouter>& handoff_registry();

/// The default policy's name.
inline constexpr const char* k_default_handoff = "least_loaded";

}  // namespace epsim::serving
