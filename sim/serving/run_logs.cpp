#include "sim/serving/run_logs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace epsim::serving {

StepLog::StepLog()
    : csv_(
          "group,step,start_ns,end_ns,duration_ns,prefill_tokens,decode_tokens,requests,barrier_idle_ns,comm_ns,"
          "mean_straggler_gap_ns\n") {}

void StepLog::on_step(const StepRecord& s) {
  fmt::format_to(std::back_inserter(csv_), "{},{},{},{},{},{},{},{},{:.1f},{:.1f},{:.1f}\n", s.group, s.step,
                 s.start_ns, s.end_ns, s.end_ns - s.start_ns, s.prefill_tokens, s.decode_tokens, s.requests,
                 s.barrier_idle_ns, s.comm_ns, s.moe_layers > 0 ? s.straggler_gap_sum_ns / s.moe_layers : 0.0);
}

TokenLog::TokenLog() : csv_("request,token,time_ns\n") {}

void TokenLog::on_first_token(const RequestState& r) {
  fmt::format_to(std::back_inserter(csv_), "{},1,{}\n", r.spec.id, r.first_token_ns);
}

void TokenLog::on_token(const RequestState& r, core::Time /*gap_ns*/) {
  fmt::format_to(std::back_inserter(csv_), "{},{},{}\n", r.spec.id, r.generated, r.last_token_ns);
}

LayerLog::LayerLog(std::int64_t every)
    : every_(every),
      csv_(
          "group,step,layer,moe_layer,gpu,tokens,activated_experts,local_ns,expert_ns,straggler_gap_ns,"
          "token_imbalance,latency_imbalance,dispatch_ns,combine_ns\n") {}

void LayerLog::on_layer(const LayerRecord& l) {
  if (l.step % every_ != 0) {
    return;
  }
  const auto gpus = l.gpu_tokens.size();
  double tokens_sum = 0.0;
  double tokens_max = 0.0;
  double min_ns = l.expert_max_ns;
  for (std::size_t g = 0; g < gpus; ++g) {
    tokens_sum += l.gpu_tokens[g];
    tokens_max = std::max(tokens_max, static_cast<double>(l.gpu_tokens[g]));
    if (l.gpu_expert_ns[g] > 0.0) {
      min_ns = std::min(min_ns, l.gpu_expert_ns[g]);
    }
  }
  // Token imbalance: max / mean tokens per GPU; latency imbalance: max / min expert time (busy GPUs).
  const double token_imbalance = tokens_sum > 0.0 ? tokens_max / (tokens_sum / static_cast<double>(gpus)) : 0.0;
  const double latency_imbalance = min_ns > 0.0 ? l.expert_max_ns / min_ns : 0.0;
  for (std::size_t g = 0; g < gpus; ++g) {
    fmt::format_to(std::back_inserter(csv_), "{},{},{},{},{},{},{},{:.1f},{:.1f},{:.1f},{:.4f},{:.4f},{:.1f},{:.1f}\n",
                   l.group, l.step, l.layer, l.moe_layer, g, l.gpu_tokens[g], l.gpu_activated[g], l.gpu_local_ns[g],
                   l.gpu_expert_ns[g], l.straggler_gap_ns(), token_imbalance, latency_imbalance, l.dispatch_ns,
                   l.combine_ns);
  }
}

TimelineLog::TimelineLog(std::int64_t max_steps) : max_steps_(max_steps) {}

// Slices run between integer-ns boundaries, each boundary rounded once and shared by the slices on
// either side, and ts / dur are printed exactly (us with three decimals from integer ns): slices on a
// track abut exactly instead of overlapping by a rounding error. A track's slice never starts before
// its previous one ended (a boundary computed twice, in two layers, may differ by a nanosecond).
void TimelineLog::slice(const char* name, int pid, int tid, std::int64_t begin_ns, std::int64_t end_ns, int layer) {
  std::int64_t& track_end = track_end_ns_[{pid, tid}];
  begin_ns = std::max(begin_ns, track_end);
  if (end_ns <= begin_ns) {
    return;
  }
  track_end = end_ns;
  const std::int64_t dur_ns = end_ns - begin_ns;
  fmt::format_to(std::back_inserter(events_),
                 "{}{{\"name\":\"{}\",\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":{}.{:03},\"dur\":{}.{:03},\"args\":{{"
                 "\"layer\":{}}}}}",
                 events_.empty() ? "" : ",\n", name, pid, tid, begin_ns / 1000, begin_ns % 1000, dur_ns / 1000,
                 dur_ns % 1000, layer);
}

void TimelineLog::on_layer(const LayerRecord& l) {
  if (l.step >= max_steps_) {
    return;
  }
  const auto gpus = static_cast<int>(l.gpu_local_ns.size());
  max_gpus_ = std::max(max_gpus_, gpus);
  max_group_ = std::max(max_group_, l.group);
  const double t0 = static_cast<double>(l.step_start_ns) + l.offset_ns;
  const double dispatch_at = t0 + l.attention_phase_ns;
  const double experts_at = dispatch_at + l.dispatch_ns;
  const double combine_at = experts_at + l.expert_max_ns;
  const auto ns = [](double t) { return static_cast<std::int64_t>(std::llround(t)); };
  for (int g = 0; g < gpus; ++g) {
    const auto i = static_cast<std::size_t>(g);
    const std::int64_t local_end = ns(t0 + l.gpu_local_ns[i]);
    const std::int64_t experts_end = ns(experts_at + l.gpu_expert_ns[i]);
    slice("local (attention, dense)", l.group, g, ns(t0), local_end, l.layer);
    slice("wait", l.group, g, local_end, ns(dispatch_at), l.layer);
    slice("dispatch", l.group, g, ns(dispatch_at), ns(experts_at), l.layer);
    slice("experts", l.group, g, ns(experts_at), experts_end, l.layer);
    slice("wait", l.group, g, experts_end, ns(combine_at), l.layer);
    slice("combine", l.group, g, ns(combine_at), ns(combine_at + l.combine_ns), l.layer);
  }
}

std::string TimelineLog::json() const {
  std::string out = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  std::string names;
  for (int p = 0; p <= max_group_; ++p) {
    fmt::format_to(std::back_inserter(names),
                   "{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{},\"args\":{{\"name\":\"EP group {}\"}}}},\n", p,
                   p);
    for (int g = 0; g < max_gpus_; ++g) {
      fmt::format_to(
          std::back_inserter(names),
          "{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":\"GPU {}\"}}}},\n", p, g,
          g);
    }
  }
  out += names;
  out += events_;
  out += "\n]}\n";
  return out;
}

}  // namespace epsim::serving
