// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a request trace holds before it is replayed (`epsim workload stats`): requests, duration, mean
// rate, prompt and output length percentiles, and for traces with block ids (Mooncake) the ideal prefix
// cache hit rate: an infinite, block-granular cache that keeps every block any earlier request brought.
#include <cstddef>
#include <cstdint>
#include <string>

#include "workloads/request_trace.hpp"

namespace epsim::workloads {

/// The most distinct block ids the ideal hit rate remembers (~50 bytes each in a hash set: ~200 MiB);
/// a trace with more is refused rather than allowed to take all memory.
inline constexpr std::size_t k_max_stats_blocks = std::size_t{1} << 22;

struct LengthPercentiles {
  double mean = 0.0;
  double p50 = 0.0;  ///< quantiles by linear interpolation between closest ranks (numpy's default)
  double p90 = 0.0;
  double p99 = 0.0;
  double max = 0.0;
};

struct RequestTraceStats {
  std::string file;
  TraceFormat format = TraceFormat::csv;
  std::int64_t requests = 0;            ///< inside the window, up to the request cap
  std::int64_t rows_before_window = 0;  ///< rows recorded before replay_start_s
  std::int64_t skipped_rows = 0;        ///< the format's skipped rows (failures, other models)
  std::string skipped_what;
  double first_arrival_s = 0.0;  ///< after the window's start and the speed-up, as a run replays them
  double last_arrival_s = 0.0;
  double duration_s = 0.0;                 ///< last - first arrival
  double mean_rate_rps = 0.0;              ///< (requests - 1) / duration_s: the gaps' mean rate (0 for one request)
  std::int64_t requests_with_lengths = 0;  ///< an arrival-only CSV row has none (the config draws them)
  LengthPercentiles prompt;
  LengthPercentiles output;
  bool has_blocks = false;            ///< the rows carry block ids
  std::int64_t distinct_blocks = 0;   ///< block ids seen
  std::int64_t prompt_tokens = 0;     ///< sum of the prompts' tokens
  std::int64_t ideal_hit_tokens = 0;  ///< tokens of each prompt's leading blocks already seen in an earlier request
  double ideal_hit_rate = 0.0;        ///< ideal_hit_tokens / prompt_tokens
};

/// Reads `file` once, streamed (lengths are kept for the percentiles: 16 bytes a request). Stops after
/// `max_requests` requests (0 = every one, at most k_max_requests). Throws core::Error naming the file
/// (and line) on a malformed row, and when the trace has more than `max_blocks` distinct block ids.
RequestTraceStats compute_request_trace_stats(const std::string& file, const ReplayOptions& o,
                                              std::int64_t max_requests = 0,
                                              std::size_t max_blocks = k_max_stats_blocks);

/// The stats as text, one figure a line.
std::string format_request_trace_stats(const RequestTraceStats& s);

}  // namespace epsim::workloads
