// SPDX-License-Identifier: Apache-2.0
#pragma once
// A request as the workload produces it: when it arrives and how long its prompt and answer are.
#include <cstdint>

#include "core/time.hpp"

namespace epsim::workloads {

/// The longest prompt or answer a request may have (4 Mi tokens, beyond any model's context): lengths
/// from configs and replayed files are checked against it, so a corrupt row cannot stall a run.
inline constexpr std::int64_t k_max_request_tokens = std::int64_t{1} << 22;

struct RequestSpec {
  std::int64_t id = 0;
  core::Time arrival_ns = 0;
  std::int64_t prompt_tokens = 0;
  std::int64_t output_tokens = 0;  ///< tokens to generate, >= 1 (the first comes out of prefill)
};

}  // namespace epsim::workloads
