// SPDX-License-Identifier: Apache-2.0
#pragma once
// Statistics of a routing trace, so synthetic and real traces can be compared: per MoE layer, the skew
// of expert loads (max/mean, max/min, Gini of the trace's total per-expert load, and the mean per-step
// max/mean and std/mean, per expert and per GPU: the per-layer, per-iteration imbalance ratio
// (max - mean) / mean that TensorRT-LLM's expert statistics report, plus 1), the share of steps each
// expert is active, the most correlated expert pairs (Pearson correlation of per-step counts), each GPU's
// token share under linear placement for an EP size, and drift (cosine distance between the load vectors
// of consecutive windows). Given a group limit (DeepSeek-V3's n_group / topk_group), also how many of the
// recorded tokens reach more groups than it allows (needs the per-token expert ids). Streams the trace.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "workloads/routing_trace.pb.h"

namespace epsim::workloads {

struct ExpertPair {
  int a = 0;
  int b = 0;
  double correlation = 0.0;
};

struct LayerStats {
  double max_over_mean = 0.0;           ///< of total per-expert load over the trace
  double max_over_min = 0.0;            ///< of total per-expert load (infinite if an expert is never routed to)
  double gini = 0.0;                    ///< of total per-expert load (0 = even)
  double step_max_over_mean = 0.0;      ///< mean over steps of the step's max / mean expert load
  double step_cv = 0.0;                 ///< mean over steps of the step's std / mean expert load (population std)
  std::vector<double> active_share;     ///< per expert: share of steps with at least one token
  std::vector<ExpertPair> top_pairs;    ///< most correlated pairs, descending
  std::vector<double> gpu_share;        ///< per GPU of the EP group under linear placement: share of tokens
  double gpu_max_over_mean = 0.0;       ///< of the trace's total per-GPU share
  double gpu_step_max_over_mean = 0.0;  ///< mean over steps of the step's max / mean GPU load (linear placement)
  double gpu_step_cv = 0.0;             ///< mean over steps of the step's std / mean GPU load
  double drift_mean = 0.0;              ///< mean cosine distance between consecutive windows
  double drift_max = 0.0;
  double drift_first_last = 0.0;  ///< cosine distance between the first and the last window
};

/// Group-limited routing over every (step, layer, token) of a trace with per-token expert ids.
struct GroupLimitStats {
  int groups = 0;
  int topk_group = 0;
  bool checked = false;                 ///< false: the trace has no per-token expert ids
  std::int64_t tokens = 0;              ///< token-layer pairs checked
  std::int64_t tokens_over_limit = 0;   ///< of those, reaching more than topk_group groups
  int max_groups = 0;                   ///< most groups any token reached
  double mean_groups = 0.0;             ///< mean groups per token
  std::vector<std::int64_t> histogram;  ///< tokens per number of groups reached (size groups + 1)
  std::int64_t first_step = -1;         ///< step index and layer of the first token over the limit
  int first_layer = -1;
  double share_over_limit() const {
    return tokens > 0 ? static_cast<double>(tokens_over_limit) / static_cast<double>(tokens) : 0.0;
  }
};

struct TraceStats {
  trace::Header header;
  std::int64_t steps = 0;
  std::int64_t tokens = 0;
  std::vector<LayerStats> layers;
  std::optional<GroupLimitStats> group_limit;  ///< when StatsOptions asked for the check
};

struct StatsOptions {
  int ep_size = 8;        ///< GPUs for the per-GPU share under linear placement (must divide experts)
  int window = 100;       ///< steps per drift window
  int top_pairs = 5;      ///< correlated pairs reported per layer
  int expert_groups = 0;  ///< > 0: check group-limited routing over this many groups (must divide experts)
  int topk_group = 0;     ///< groups a token may reach (1..expert_groups), with expert_groups > 0
};

TraceStats compute_trace_stats(const std::filesystem::path& path, const StatsOptions& o);
/// A human-readable summary (per layer, and the averages over layers).
std::string format_trace_stats(const TraceStats& s, bool per_layer);
/// The same as JSON text.
std::string trace_stats_json(const TraceStats& s);
/// Gini coefficient of non-negative values (0 = all equal, -> 1 = all mass on one).
double gini(std::vector<double> values);
/// 1 - cosine similarity.
double cosine_distance(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace epsim::workloads
