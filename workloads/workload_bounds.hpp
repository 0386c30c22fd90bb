// SPDX-License-Identifier: Apache-2.0
#pragma once
// The bounds of a workload, shared by the config readers, `epsim slo --rates` and studies' rate grids.
#include <cstdint>

namespace epsim::workloads {

/// Arrival rates epsim accepts, req/s: slower than one request in ~12 days is no serving workload (and
/// at 1e-300 the first arrival fell past the end of simulated time: 0 requests, exit 0); faster than
/// 10 million per second exceeds any cluster it models.
inline constexpr double k_min_rate_rps = 1e-6;
inline constexpr double k_max_rate_rps = 1e7;
/// The most requests one run generates: memory grows ~185 bytes per request (1e8 ended in bad_alloc).
inline constexpr std::int64_t k_max_requests = 10000000;

}  // namespace epsim::workloads
