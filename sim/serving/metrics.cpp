#include "sim/serving/metrics.hpp"

#include <numeric>

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

MetricsCollector::MetricsCollector(int total_gpus)
    : inter_token_ns_(0.005, 1.0, 1e15), gpu_busy_ns_(static_cast<std::size_t>(total_gpus), 0.0) {}

void MetricsCollector::on_layer(const LayerRecord& layer) {
  straggler_gap_ns_.add(layer.straggler_gap_ns());
  attention_idle_ns_ += layer.attention_idle_ns;
  expert_idle_ns_ += layer.expert_idle_ns;
  comm_ns_ += layer.dispatch_ns + layer.combine_ns;
  intra_bytes_ += layer.intra_bytes;
  inter_bytes_ += layer.inter_bytes;
}

void MetricsCollector::on_step(const StepRecord& step) {
  ++steps_;
  step_time_ns_ += static_cast<double>(step.end_ns - step.start_ns);
  prefill_tokens_ += step.prefill_tokens;
  decode_tokens_ += step.decode_tokens;
  barrier_idle_ns_ += step.barrier_idle_ns;
  const int offset = group_offset_.empty() ? 0 : group_offset_[static_cast<std::size_t>(step.group)];
  for (std::size_t g = 0; g < step.gpu_busy_ns.size(); ++g) {
    gpu_busy_ns_[static_cast<std::size_t>(offset) + g] += step.gpu_busy_ns[g];
  }
}

void MetricsCollector::on_token(const RequestState& /*r*/, core::Time gap_ns) {
  inter_token_ns_.add(static_cast<double>(gap_ns));
  inter_token_stats_ns_.add(static_cast<double>(gap_ns));
}

RunSummary summarize_run(const std::vector<RequestState>& requests, const MetricsCollector& m, const SloConfig& slo,
                         core::Time makespan_ns, int groups) {
  RunSummary s;
  s.requests = static_cast<std::int64_t>(requests.size());
  s.makespan_s = core::to_seconds(makespan_ns);
  std::vector<double> ttft;
  std::vector<double> tpot;
  std::vector<double> e2e;
  std::int64_t met_both = 0;
  std::int64_t met_ttft = 0;
  std::int64_t met_tpot = 0;
  std::int64_t output_tokens = 0;
  for (const RequestState& r : requests) {
    s.requests_rejected += r.rejected ? 1 : 0;
    s.preemptions += r.preemptions;
    if (!r.finished()) {
      continue;  // unfinished requests count as SLO misses
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
  s.inter_token_ms.p50 = itl.quantile(0.50) / 1e6;
  s.inter_token_ms.p90 = itl.quantile(0.90) / 1e6;
  s.inter_token_ms.p95 = itl.quantile(0.95) / 1e6;
  s.inter_token_ms.p99 = itl.quantile(0.99) / 1e6;
  s.inter_token_ms.mean = m.inter_token_stats_ns().mean() / 1e6;
  if (s.requests > 0) {
    const auto n = static_cast<double>(s.requests);
    s.slo_attainment = static_cast<double>(met_both) / n;
    s.slo_ttft_attainment = static_cast<double>(met_ttft) / n;
    s.slo_tpot_attainment = static_cast<double>(met_tpot) / n;
  }
  if (s.makespan_s > 0.0) {
    s.goodput_rps = static_cast<double>(met_both) / s.makespan_s;
    s.throughput_rps = static_cast<double>(s.requests_finished) / s.makespan_s;
    s.output_tokens_per_s = static_cast<double>(output_tokens) / s.makespan_s;
  }
  s.steps = m.steps();
  s.mean_step_ms = m.steps() ? m.step_time_ns() / static_cast<double>(m.steps()) / 1e6 : 0.0;
  s.mean_straggler_gap_us = m.straggler_gap_ns().mean() / 1e3;
  s.max_straggler_gap_us = m.straggler_gap_ns().max() / 1e3;
  const auto gpus = static_cast<double>(m.gpu_busy_ns().size());
  // Step time is summed over groups; each group's GPUs spend it together.
  const double gpu_time = m.step_time_ns() * gpus / static_cast<double>(groups);
  s.barrier_idle_fraction = gpu_time > 0.0 ? m.barrier_idle_ns() / gpu_time : 0.0;
  s.comm_fraction = m.step_time_ns() > 0.0 ? m.comm_ns() / m.step_time_ns() : 0.0;
  s.intra_node_gb = m.intra_bytes() / 1e9;
  s.inter_node_gb = m.inter_bytes() / 1e9;
  for (const double busy : m.gpu_busy_ns()) {
    s.gpu_busy_fraction.push_back(makespan_ns > 0 ? busy / static_cast<double>(makespan_ns) : 0.0);
  }
  return s;
}

}  // namespace epsim::serving
