// SPDX-License-Identifier: Apache-2.0
#include "sim/metrics.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <utility>

namespace epsim::serving {

LatencySummary summarize(std::vector<double>& values) {
  LatencySummary s;
  s.count = values.size();
  if (values.empty()) {
    return s;
  }
  s.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  s.p50 = core::quantile_inplace(values, 0.50);
  s.p90 = core::quantile_inplace(values, 0.90);
  s.p95 = core::quantile_inplace(values, 0.95);
  s.p99 = core::quantile_inplace(values, 0.99);
  return s;
}

MetricsCollector::MetricsCollector(int total_gpus, MetricsWindow window)
    : window_(window),
      warmup_ns_(core::from_seconds(window.warmup_s)),
      steps_(window),
      inter_token_ns_(0.005, 1.0, 1e15),
      gpu_busy_ns_(static_cast<std::size_t>(total_gpus), 0.0) {}

void StepTotals::add(const StepSample& st) {
  ++steps;
  step_time_ns += static_cast<double>(st.duration_ns);
  auto size = std::find_if(step_time_by_gpus.begin(), step_time_by_gpus.end(),
                           [&st](const std::pair<int, double>& e) { return e.first == st.gpus; });
  if (size == step_time_by_gpus.end()) {
    size = step_time_by_gpus.insert(step_time_by_gpus.end(), {st.gpus, 0.0});
  }
  size->second += static_cast<double>(st.duration_ns);
  idle_ns += st.barrier_idle_ns;
  comm_ns += st.comm_ns;
  gap_sum_ns += st.straggler_gap_sum_ns;
  layers += st.moe_layers;
  max_gap_us = std::max(max_gap_us, st.straggler_gap_max_ns / 1e3);
  intra_gb += st.intra_bytes / 1e9;
  inter_gb += st.inter_bytes / 1e9;
  caps.add(st.caps);
}

void MetricsCollector::on_step(const StepRecord& s) {
  steps_.add(s.start_ns,
             {s.end_ns - s.start_ns, group_gpus(s.group), s.barrier_idle_ns, s.comm_ns, s.straggler_gap_sum_ns,
              s.straggler_gap_max_ns, s.moe_layers, s.intra_bytes, s.inter_bytes, s.caps});
  if (s.start_ns < warmup_ns_) {
    return;
  }
  const int offset = group_offset_.empty() ? 0 : group_offset_[static_cast<std::size_t>(s.group)];
  for (std::size_t g = 0; g < s.gpu_busy_ns.size(); ++g) {
    gpu_busy_ns_[static_cast<std::size_t>(offset) + g] += s.gpu_busy_ns[g];
  }
}

void MetricsCollector::on_arrival(const RequestState& r) {
  steps_.on_arrival(r.spec.arrival_ns);
}

void MetricsCollector::on_arrivals_end(core::Time last_arrival_ns) {
  steps_.on_arrivals_end(last_arrival_ns);
}

void MetricsCollector::on_token(const RequestState& r, core::Time gap_ns) {
  if (r.spec.arrival_ns < warmup_ns_) {
    return;
  }
  inter_token_ns_.add(static_cast<double>(gap_ns));
  inter_token_stats_ns_.add(static_cast<double>(gap_ns));
}

MeasuredWindow measured_window(const std::vector<RequestState>& requests, const MetricsWindow& window) {
  core::Time last_arrival = 0;
  for (const RequestState& r : requests) {
    last_arrival = std::max(last_arrival, r.spec.arrival_ns);
  }
  return {core::from_seconds(window.warmup_s), window.cooldown_s > 0.0
                                                   ? last_arrival - core::from_seconds(window.cooldown_s)
                                                   : std::numeric_limits<core::Time>::max()};
}

namespace {

// Latencies, SLO attainment and rates of the requests that arrived in the window.
void summarize_requests(const std::vector<RequestState>& requests, const MeasuredWindow& w, const SloConfig& slo,
                        const MetricsCollector& m, RunSummary& s) {
  std::vector<double> ttft;
  std::vector<double> tpot;
  std::vector<double> e2e;
  std::int64_t met_both = 0;
  std::int64_t met_ttft = 0;
  std::int64_t met_tpot = 0;
  std::int64_t output_tokens = 0;
  for (const RequestState& r : requests) {
    if (!w.contains(r.spec.arrival_ns)) {
      continue;
    }
    ++s.requests;
    s.requests_rejected += r.rejected ? 1 : 0;
    s.preemptions += r.preemptions;
    if (!r.finished()) {
      continue;  // unfinished and rejected requests count as SLO misses
    }
    ++s.requests_finished;
    output_tokens += r.spec.output_tokens;
    ttft.push_back(r.ttft_ms());
    e2e.push_back(r.e2e_ms());
    if (r.spec.output_tokens > 1) {
      tpot.push_back(r.tpot_ms());
    }
    const bool ttft_ok = r.ttft_ms() <= slo.ttft_ms;
    const bool tpot_ok = r.tpot_ms() <= slo.tpot_ms;
    met_ttft += ttft_ok ? 1 : 0;
    met_tpot += tpot_ok ? 1 : 0;
    met_both += (ttft_ok && tpot_ok) ? 1 : 0;
  }
  s.ttft_ms = summarize(ttft);
  s.tpot_ms = summarize(tpot);
  s.e2e_ms = summarize(e2e);
  const auto& itl = m.inter_token_ns();
  s.inter_token_ms.count = itl.count();
  s.inter_token_ms.mean = m.inter_token_stats_ns().mean() / 1e6;
  s.inter_token_ms.p50 = itl.quantile(0.50) / 1e6;
  s.inter_token_ms.p90 = itl.quantile(0.90) / 1e6;
  s.inter_token_ms.p95 = itl.quantile(0.95) / 1e6;
  s.inter_token_ms.p99 = itl.quantile(0.99) / 1e6;
  if (s.requests > 0) {
    const auto n = static_cast<double>(s.requests);
    s.slo_attainment = static_cast<double>(met_both) / n;
    s.slo_ttft_attainment = static_cast<double>(met_ttft) / n;
    s.slo_tpot_attainment = static_cast<double>(met_tpot) / n;
  }
  if (s.measured_s > 0.0) {
    s.goodput_rps = static_cast<double>(met_both) / s.measured_s;
    s.throughput_rps = static_cast<double>(s.requests_finished) / s.measured_s;
    s.output_tokens_per_s = static_cast<double>(output_tokens) / s.measured_s;
  }
}

// Step time, barrier idle, communication, straggler gaps and traffic of the steps that started in it.
void summarize_steps(const MetricsCollector& m, const MeasuredWindow& w, RunSummary& s) {
  const StepTotals t = m.step_totals(w.begin_ns, w.end_ns);
  s.steps = t.steps;
  s.max_straggler_gap_us = t.max_gap_us;
  s.intra_node_gb = t.intra_gb;
  s.inter_node_gb = t.inter_gb;
  s.caps = t.caps;
  s.mean_step_ms = s.steps > 0 ? t.step_time_ns / static_cast<double>(s.steps) / 1e6 : 0.0;
  s.mean_straggler_gap_us = t.layers > 0 ? t.gap_sum_ns / static_cast<double>(t.layers) / 1e3 : 0.0;
  s.mean_comm_ms = s.steps > 0 ? t.comm_ns / static_cast<double>(s.steps) / 1e6 : 0.0;
  // Each group's GPUs spend its step time together: GPU time is step time x the group's GPUs.
  double gpu_time = 0.0;
  for (const auto& [gpus, time] : t.step_time_by_gpus) {
    gpu_time += time * static_cast<double>(gpus);
  }
  s.barrier_idle_fraction = t.step_time_ns > 0.0 ? t.idle_ns / gpu_time : 0.0;
  s.comm_fraction = t.step_time_ns > 0.0 ? t.comm_ns / t.step_time_ns : 0.0;
}

}  // namespace

RunSummary summarize_run(const std::vector<RequestState>& requests, const MetricsCollector& m, const SloConfig& slo,
                         core::Time makespan_ns) {
  RunSummary s;
  s.requests_total = static_cast<std::int64_t>(requests.size());
  s.makespan_s = core::to_seconds(makespan_ns);
  const MeasuredWindow w = measured_window(requests, m.window());
  const core::Time begin = w.begin_ns;
  const core::Time end = w.end_ns;
  const core::Time window_end = std::min(end, makespan_ns);
  s.measured_s = std::max(0.0, core::to_seconds(window_end - begin));

  summarize_requests(requests, w, slo, m, s);
  summarize_steps(m, w, s);
  const double busy_span = static_cast<double>(makespan_ns - begin);
  for (const double busy : m.gpu_busy_ns()) {
    s.gpu_busy_fraction.push_back(busy_span > 0.0 ? busy / busy_span : 0.0);
  }
  return s;
}

}  // namespace epsim::serving
