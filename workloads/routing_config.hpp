// SPDX-License-Identifier: Apache-2.0
#pragma once
// The [routing] section: where each step's expert loads come from, the synthetic generator or a
// replayed trace, with their settings. A trace's shape is checked against the model here, so a
// mismatch is a config error before anything runs.
#include <cstdint>

#include "core/params.hpp"
#include "workloads/synthetic_router.hpp"
#include "workloads/trace_replay.hpp"

namespace epsim::workloads {

enum class RoutingSourceKind : std::uint8_t { synthetic, trace };

struct RoutingConfig {
  RoutingSourceKind source = RoutingSourceKind::synthetic;
  SyntheticRouterConfig synthetic;
  TraceReplayConfig trace;
};

/// The model shape a routing source must match, and its group limit (DeepSeek-V3's n_group / topk_group),
/// which a replayed trace's per-token expert ids are checked against while it replays: the header alone
/// cannot tell, and reading a whole trace here would cost a full pass before the run.
struct RoutingShape {
  std::int64_t moe_layers = 0;
  std::int64_t experts = 0;
  std::int64_t top_k = 0;
  std::int64_t expert_groups = 1;
  std::int64_t topk_group = 1;
};

/// Reads and finishes [routing] of `root`.
RoutingConfig parse_routing_section(core::ParamTable& root, const RoutingShape& shape);

}  // namespace epsim::workloads
