// SPDX-License-Identifier: Apache-2.0
#pragma once
// Collects the run's metrics as an observer and reduces them to the headline summary.
// Requests arriving, and steps starting, inside the measurement window [warm-up, last arrival -
// cool-down] count; per-GPU busy time and the pooled inter-token distribution count from the warm-up on.
#include <cstdint>
#include <utility>
#include <vector>

#include "core/statistics.hpp"
#include "sim/observer.hpp"
#include "sim/serving_config.hpp"
#include "sim/window_fold.hpp"

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

/// What the summary needs of one step.
struct StepSample {
  core::Time duration_ns = 0;  ///< end - start
  int gpus = 0;                ///< of its EP group
  double barrier_idle_ns = 0.0;
  double comm_ns = 0.0;
  double straggler_gap_sum_ns = 0.0;
  double straggler_gap_max_ns = 0.0;
  int moe_layers = 0;
  double intra_bytes = 0.0;
  double inter_bytes = 0.0;
  CapTally caps;  ///< its DP ranks and those a configured cap held back
};

/// Running totals of the measured steps, summed in the order the steps ended.
struct StepTotals {
  std::int64_t steps = 0;
  double step_time_ns = 0.0;
  // Step time per group size (GPUs, summed ns): the barrier idle share weighs each step by its GPUs.
  std::vector<std::pair<int, double>> step_time_by_gpus;
  double idle_ns = 0.0;
  double comm_ns = 0.0;
  double gap_sum_ns = 0.0;
  std::int64_t layers = 0;
  double max_gap_us = 0.0;
  double intra_gb = 0.0;
  double inter_gb = 0.0;
  CapTally caps;
  void add(const StepSample& s);
};

class MetricsCollector final : public Observer {
 public:
  MetricsCollector(int total_gpus, MetricsWindow window);
  void on_step(const StepRecord& step) override;
  void on_token(const RequestState& r, core::Time gap_ns) override;
  void on_arrival(const RequestState& r) override;
  void on_arrivals_end(core::Time last_arrival_ns) override;

  /// The measured steps' totals over the final window (memory flat in run length: only steps of the
  /// last cool-down are kept until the window's end is known).
  StepTotals step_totals(core::Time begin_ns, core::Time end_ns) const { return steps_.total(begin_ns, end_ns); }
  std::size_t pending_steps() const { return steps_.pending(); }
  const core::QuantileSketch& inter_token_ns() const { return inter_token_ns_; }
  const core::RunningStats& inter_token_stats_ns() const { return inter_token_stats_ns_; }
  const std::vector<double>& gpu_busy_ns() const { return gpu_busy_ns_; }
  const MetricsWindow& window() const { return window_; }
  /// Where each group's GPUs start in the global numbering, and how many it has (set by the simulator;
  /// unset: one group of every GPU).
  void set_groups(std::vector<int> offsets, std::vector<int> gpus) {
    group_offset_ = std::move(offsets);
    group_gpus_ = std::move(gpus);
  }
  /// GPUs of EP group `group`.
  int group_gpus(int group) const {
    return group_gpus_.empty() ? static_cast<int>(gpu_busy_ns_.size()) : group_gpus_[static_cast<std::size_t>(group)];
  }

 private:
  MetricsWindow window_;
  core::Time warmup_ns_;
  WindowFold<StepSample, StepTotals> steps_;
  core::QuantileSketch inter_token_ns_;
  core::RunningStats inter_token_stats_ns_;
  std::vector<double> gpu_busy_ns_;
  std::vector<int> group_offset_;
  std::vector<int> group_gpus_;
};

struct RunSummary {
  std::int64_t requests = 0;  ///< requests that arrived in the measurement window
  std::int64_t requests_finished = 0;
  std::int64_t requests_rejected = 0;  ///< could never fit in a rank's KV cache
  std::int64_t preemptions = 0;        ///< recompute preemptions of measured requests
  std::int64_t requests_total = 0;     ///< all arrivals, measured or not
  double makespan_s = 0.0;             ///< from time 0 to the end of the last step
  double measured_s = 0.0;             ///< length of the measurement window (goodput's denominator)
  LatencySummary ttft_ms;              ///< finished requests
  LatencySummary tpot_ms;              ///< per-request mean, requests with >= 2 output tokens
  LatencySummary e2e_ms;
  LatencySummary inter_token_ms;  ///< pooled over all decode tokens (streaming, +-0.5 %)
  double slo_attainment = 0.0;    ///< share of measured requests meeting both targets
  double slo_ttft_attainment = 0.0;
  double slo_tpot_attainment = 0.0;
  double goodput_rps = 0.0;  ///< SLO-meeting requests per second of the window
  double throughput_rps = 0.0;
  double output_tokens_per_s = 0.0;
  std::int64_t steps = 0;  ///< steps starting in the window
  double mean_step_ms = 0.0;
  double mean_straggler_gap_us = 0.0;  ///< per MoE layer: slowest minus fastest expert GPU
  double mean_comm_ms = 0.0;           ///< per step: time in dispatch + combine all-to-alls
  double max_straggler_gap_us = 0.0;
  double barrier_idle_fraction = 0.0;  ///< GPU time waiting at barriers / (GPUs x step time)
  double comm_fraction = 0.0;          ///< share of step time in dispatch + combine
  double intra_node_gb = 0.0;
  double inter_node_gb = 0.0;
  CapTally caps;  ///< measured rank-steps, and those in which each configured cap held back waiting requests
  std::vector<double> gpu_busy_fraction;  ///< busy time / (makespan - warm-up)
};

/// The measurement window: requests arriving, and steps starting, in [begin_ns, end_ns] count.
struct MeasuredWindow {
  core::Time begin_ns = 0;
  core::Time end_ns = 0;
  bool contains(core::Time t) const { return t >= begin_ns && t <= end_ns; }
};
/// [warm-up, last arrival - cool-down] of a run's requests.
MeasuredWindow measured_window(const std::vector<RequestState>& requests, const MetricsWindow& window);

RunSummary summarize_run(const std::vector<RequestState>& requests, const MetricsCollector& m, const SloConfig& slo,
                         core::Time makespan_ns);

}  // namespace epsim::serving
