#pragma once
// Collects the run's metrics as an observer and reduces them to the headline summary (DESIGN.md 7).
#include <cstdint>
#include <vector>

#include "sim/core/statistics.hpp"
#include "sim/serving/observer.hpp"
#include "sim/serving/serving_config.hpp"

namespace epsim::serving {

struct LatencySummary {
  std::uint64_t count = 0;
  double mean = 0.0;
  double p50 = 0.0;
  double p90 = 0.0;
  double p95 = 0.0;
  double p99 = 0.0;
};

/// Exact summary of a sample (quantiles by linear interpolation); sorts `values`.
LatencySummary summarize(std::vector<double>& values);

class MetricsCollector final : public Observer {
 public:
  explicit MetricsCollector(int total_gpus);
  void on_layer(const LayerRecord& layer) override;
  void on_step(const StepRecord& step) override;
  void on_token(const RequestState& r, core::Time gap_ns) override;

  const core::RunningStats& straggler_gap_ns() const { return straggler_gap_ns_; }
  const core::QuantileSketch& inter_token_ns() const { return inter_token_ns_; }
  const core::RunningStats& inter_token_stats_ns() const { return inter_token_stats_ns_; }
  double attention_idle_ns() const { return attention_idle_ns_; }
  double expert_idle_ns() const { return expert_idle_ns_; }
  double barrier_idle_ns() const { return barrier_idle_ns_; }
  double comm_ns() const { return comm_ns_; }
  double intra_bytes() const { return intra_bytes_; }
  double inter_bytes() const { return inter_bytes_; }
  std::int64_t steps() const { return steps_; }
  double step_time_ns() const { return step_time_ns_; }
  std::int64_t prefill_tokens() const { return prefill_tokens_; }
  std::int64_t decode_tokens() const { return decode_tokens_; }
  const std::vector<double>& gpu_busy_ns() const { return gpu_busy_ns_; }
  /// Where each group's GPUs start in the global numbering (set by the simulator).
  void set_group_offsets(std::vector<int> offsets) { group_offset_ = std::move(offsets); }

 private:
  core::RunningStats straggler_gap_ns_;
  core::QuantileSketch inter_token_ns_;
  core::RunningStats inter_token_stats_ns_;
  double attention_idle_ns_ = 0.0;
  double expert_idle_ns_ = 0.0;
  double barrier_idle_ns_ = 0.0;
  double comm_ns_ = 0.0;
  double intra_bytes_ = 0.0;
  double inter_bytes_ = 0.0;
  std::int64_t steps_ = 0;
  double step_time_ns_ = 0.0;
  std::int64_t prefill_tokens_ = 0;
  std::int64_t decode_tokens_ = 0;
  std::vector<double> gpu_busy_ns_;
  std::vector<int> group_offset_;
};

struct RunSummary {
  std::int64_t requests = 0;  ///< requests that arrived
  std::int64_t requests_finished = 0;
  std::int64_t requests_rejected = 0;  ///< could never fit in a rank's KV cache
  std::int64_t preemptions = 0;        ///< recompute preemptions, all requests
  double makespan_s = 0.0;             ///< from time 0 to the end of the last step
  LatencySummary ttft_ms;              ///< finished requests
  LatencySummary tpot_ms;              ///< per-request mean, requests with >= 2 output tokens
  LatencySummary e2e_ms;
  LatencySummary inter_token_ms;  ///< pooled over all decode tokens (streaming, +-0.5 %)
  double slo_attainment = 0.0;    ///< share of arrived requests meeting both targets
  double slo_ttft_attainment = 0.0;
  double slo_tpot_attainment = 0.0;
  double goodput_rps = 0.0;  ///< SLO-meeting requests per second of makespan
  double throughput_rps = 0.0;
  double output_tokens_per_s = 0.0;
  std::int64_t steps = 0;
  double mean_step_ms = 0.0;
  double mean_straggler_gap_us = 0.0;  ///< per MoE layer: slowest minus fastest expert GPU
  double max_straggler_gap_us = 0.0;
  double barrier_idle_fraction = 0.0;  ///< GPU time waiting at barriers / (GPUs x step time)
  double comm_fraction = 0.0;          ///< share of step time in dispatch + combine
  double intra_node_gb = 0.0;
  double inter_node_gb = 0.0;
  std::vector<double> gpu_busy_fraction;
};

RunSummary summarize_run(const std::vector<RequestState>& requests, const MetricsCollector& m, const SloConfig& slo,
                         core::Time makespan_ns, int groups);

}  // namespace epsim::serving
