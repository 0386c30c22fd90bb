// SPDX-License-Identifier: Apache-2.0
#include "sim/run_logs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace epsim::serving {

StepLog::StepLog()
    : text_(
          "group,step,start_ns,end_ns,duration_ns,prefill_tokens,decode_tokens,requests,barrier_idle_ns,comm_ns,"
          "mean_straggler_gap_ns,queued_requests,running_requests,kv_used_fraction,preemptions,draft_ns\n") {}

void StepLog::on_step(const StepRecord& s) {
  fmt::format_to(std::back_inserter(text_.tail()),
                 "{},{},{},{},{},{},{},{},{:.1f},{:.1f},{:.1f},{},{},{:.6f},{},{:.1f}\n", s.group, s.step, s.start_ns,
                 s.end_ns, s.end_ns - s.start_ns, s.prefill_tokens, s.decode_tokens, s.requests, s.barrier_idle_ns,
                 s.comm_ns, s.moe_layers > 0 ? s.straggler_gap_sum_ns / s.moe_layers : 0.0, s.queued_requests,
                 s.running_requests, s.kv_used_fraction(), s.preemptions, s.draft_ns);
  text_.spill_if_full();
}

TokenLog::TokenLog() : text_("request,token,time_ns\n") {}

void TokenLog::on_first_token(const RequestState& r) {
  fmt::format_to(std::back_inserter(text_.tail()), "{},1,{}\n", r.spec.id, r.first_token_ns);
  text_.spill_if_full();
}

void TokenLog::on_token(const RequestState& r, core::Time /*gap_ns*/) {
  fmt::format_to(std::back_inserter(text_.tail()), "{},{},{}\n", r.spec.id, r.generated, r.last_token_ns);
  text_.spill_if_full();
}

LayerLog::LayerLog(std::int64_t every)
    : every_(every),
      text_(
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
    fmt::format_to(std::back_inserter(text_.tail()),
                   "{},{},{},{},{},{},{},{:.1f},{:.1f},{:.1f},{:.4f},{:.4f},{:.1f},{:.1f}\n", l.group, l.step, l.layer,
                   l.moe_layer, g, l.gpu_tokens[g], l.gpu_activated[g], l.gpu_local_ns[g], l.gpu_expert_ns[g],
                   l.straggler_gap_ns(), token_imbalance, latency_imbalance, l.dispatch_ns, l.combine_ns);
  }
  text_.spill_if_full();
}

void EventLog::on_migration(int group, core::Time start_ns, core::Time end_ns, double bytes) {
  rows_.push_back(
      {start_ns, group, fmt::format("{},{},migration,bytes={:.0f} end_ns={}\n", start_ns, group, bytes, end_ns)});
}

void EventLog::on_rebalance(int group, core::Time time_ns, policies::RebalanceKind kind) {
  rows_.push_back({time_ns, group, fmt::format("{},{},{},\n", time_ns, group, policies::to_string(kind))});
}

void EventLog::on_preemption(const RequestState& r, core::Time now_ns) {
  rows_.push_back(
      {now_ns, r.group, fmt::format("{},{},preemption,request={} rank={}\n", now_ns, r.group, r.spec.id, r.rank)});
}

std::string EventLog::csv() const {
  // Migrations are reported after the step they moved in: rows come out of order, sorted here.
  std::vector<const Row*> order;
  order.reserve(rows_.size());
  for (const Row& r : rows_) {
    order.push_back(&r);
  }
  std::stable_sort(order.begin(), order.end(), [](const Row* a, const Row* b) {
    return a->time_ns != b->time_ns ? a->time_ns < b->time_ns : a->group < b->group;
  });
  std::string out = "time_ns,group,kind,detail\n";
  for (const Row* r : order) {
    out += r->text;
  }
  return out;
}

GpuLayerLog::GpuLayerLog(std::vector<int> group_gpus, int moe_layers)
    : group_gpus_(std::move(group_gpus)), moe_layers_(moe_layers) {
  std::size_t cells = 0;
  for (const int gpus : group_gpus_) {
    group_first_cell_.push_back(cells);
    cells += static_cast<std::size_t>(moe_layers) * static_cast<std::size_t>(gpus);
  }
  cells_.resize(cells);
}

void GpuLayerLog::on_layer(const LayerRecord& l) {
  const auto gpus = static_cast<int>(l.gpu_expert_ns.size());
  const auto groups = static_cast<int>(group_gpus_.size());
  if (l.group >= groups || l.moe_layer >= moe_layers_ || gpus != group_gpus_[static_cast<std::size_t>(l.group)]) {
    throw core::Error(
        fmt::format("gpu_layers.csv: layer {} of group {} on {} GPUs is outside the {} groups x {} "
                    "layers sized (that group: {} GPUs)",
                    l.moe_layer, l.group, gpus, groups, moe_layers_,
                    l.group < groups ? group_gpus_[static_cast<std::size_t>(l.group)] : 0));
  }
  // The slowest GPU of the expert phase; ties go to the lowest index.
  std::size_t slowest = 0;
  for (std::size_t g = 1; g < l.gpu_expert_ns.size(); ++g) {
    if (l.gpu_expert_ns[g] > l.gpu_expert_ns[slowest]) {
      slowest = g;
    }
  }
  const double max_ns = l.gpu_expert_ns.empty() ? 0.0 : l.gpu_expert_ns[slowest];
  const std::size_t base = group_first_cell_[static_cast<std::size_t>(l.group)] +
                           static_cast<std::size_t>(l.moe_layer) * static_cast<std::size_t>(gpus);
  for (std::size_t g = 0; g < l.gpu_expert_ns.size(); ++g) {
    Cell& c = cells_[base + g];
    ++c.steps;
    c.local_ns += l.gpu_local_ns[g];
    c.expert_ns += l.gpu_expert_ns[g];
    c.wait_ns += max_ns - l.gpu_expert_ns[g];
    c.slowest += g == slowest ? 1 : 0;
  }
}

std::string GpuLayerLog::csv() const {
  std::string out = "group,moe_layer,gpu,steps,mean_local_us,mean_expert_us,mean_wait_us,slowest_share\n";
  std::size_t i = 0;
  for (std::size_t grp = 0; grp < group_gpus_.size(); ++grp) {
    for (int layer = 0; layer < moe_layers_; ++layer) {
      for (int g = 0; g < group_gpus_[grp]; ++g, ++i) {
        const Cell& c = cells_[i];
        if (c.steps == 0) {
          continue;  // a group that served no step
        }
        const auto n = static_cast<double>(c.steps);
        fmt::format_to(std::back_inserter(out), "{},{},{},{},{:.3f},{:.3f},{:.3f},{:.4f}\n", grp, layer, g, c.steps,
                       c.local_ns / n / 1e3, c.expert_ns / n / 1e3, c.wait_ns / n / 1e3,
                       static_cast<double>(c.slowest) / n);
      }
    }
  }
  return out;
}

namespace {

// Integer ns as exact microseconds (three decimals): boundaries shared by two events print alike.
struct Us {
  std::int64_t ns;
};

}  // namespace

}  // namespace epsim::serving

template <>
struct fmt::formatter<epsim::serving::Us> : fmt::formatter<std::int64_t> {
  template <class Ctx>
  auto format(epsim::serving::Us t, Ctx& ctx) const {
    const std::int64_t whole = t.ns / 1000;
    const std::int64_t frac = t.ns % 1000;
    return fmt::format_to(ctx.out(), "{}.{:03}", whole, frac < 0 ? -frac : frac);
  }
};

namespace epsim::serving {

TimelineLog::TimelineLog(std::int64_t max_steps, std::int64_t max_bytes)
    : max_steps_(max_steps), max_bytes_(max_bytes) {}

std::string& TimelineLog::open(int group) {
  max_group_ = std::max(max_group_, group);
  if (static_cast<std::size_t>(group) >= open_.size()) {
    open_.resize(static_cast<std::size_t>(group) + 1);  // once per group
    next_step_.resize(open_.size(), 0);
    gpus_.resize(open_.size(), 0);
  }
  return open_[static_cast<std::size_t>(group)];
}

// Slices run between integer-ns boundaries, each boundary rounded once and shared by the slices on
// either side, and ts / dur are printed exactly (us with three decimals from integer ns): slices on a
// track abut exactly instead of overlapping by a rounding error. A track's slice never starts before
// its previous one ended (a boundary computed twice, in two layers, may differ by a nanosecond).
void TimelineLog::slice(std::string& out, const char* name, int pid, int tid, std::int64_t begin_ns,
                        std::int64_t end_ns, int layer) {
  std::int64_t& track_end = track_end_ns_[{pid, tid}];
  begin_ns = std::max(begin_ns, track_end);
  if (end_ns <= begin_ns) {
    return;
  }
  track_end = end_ns;
  fmt::format_to(
      std::back_inserter(out),
      ",\n{{\"name\":\"{}\",\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{},\"args\":{{\"layer\":{}}}}}", name,
      pid, tid, Us{begin_ns}, Us{end_ns - begin_ns}, layer);
}

void TimelineLog::on_layer(const LayerRecord& l) {
  if (!recorded(l.step)) {
    return;
  }
  std::string& out = open(l.group);
  const auto gpus = static_cast<int>(l.gpu_local_ns.size());
  max_gpus_ = std::max(max_gpus_, gpus);
  gpus_[static_cast<std::size_t>(l.group)] = gpus;
  const double t0 = static_cast<double>(l.step_start_ns) + l.offset_ns;
  const double dispatch_at = t0 + l.attention_phase_ns;
  const double experts_at = dispatch_at + l.dispatch_ns;
  const double combine_at = experts_at + l.expert_max_ns;
  const auto ns = [](double t) { return static_cast<std::int64_t>(std::llround(t)); };
  for (int g = 0; g < gpus; ++g) {
    const auto i = static_cast<std::size_t>(g);
    const std::int64_t local_end = ns(t0 + l.gpu_local_ns[i]);
    const std::int64_t experts_end = ns(experts_at + l.gpu_expert_ns[i]);
    slice(out, "local (attention, dense)", l.group, g, ns(t0), local_end, l.layer);
    slice(out, "wait", l.group, g, local_end, ns(dispatch_at), l.layer);
    slice(out, "dispatch", l.group, g, ns(dispatch_at), ns(experts_at), l.layer);
    slice(out, "experts", l.group, g, ns(experts_at), experts_end, l.layer);
    slice(out, "wait", l.group, g, experts_end, ns(combine_at), l.layer);
    slice(out, "combine", l.group, g, ns(combine_at), ns(combine_at + l.combine_ns), l.layer);
  }
}

void TimelineLog::on_step(const StepRecord& s) {
  std::string& out = open(s.group);
  next_step_[static_cast<std::size_t>(s.group)] = s.step + 1;
  steps_recorded_ += max_steps_ == 0 || s.step < max_steps_ ? 1 : 0;
  if (!recorded(s.step)) {
    out.clear();  // the events since the previous step go with this one, not kept
    return;
  }
  // The step on its own track, then the group's counters: sampled at the step's start, the traffic ones
  // back to zero at its end (a counter holds its value until the next sample).
  const std::int64_t t0 = s.start_ns;
  const std::int64_t t1 = std::max(s.end_ns, t0);
  const int pid = s.group;
  track_end_ns_[{pid, k_steps_tid}] = t1;
  fmt::format_to(std::back_inserter(out),
                 ",\n{{\"name\":\"step {}\",\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{},\"args\":{{"
                 "\"prefill_tokens\":{},\"decode_tokens\":{},\"requests\":{},\"preemptions\":{}}}}}",
                 s.step, pid, k_steps_tid, Us{t0}, Us{t1 - t0}, s.prefill_tokens, s.decode_tokens, s.requests,
                 s.preemptions);
  if (s.draft_ns > 0.0) {
    // Speculative decoding: the draft passes close the step, nested in its slice.
    const std::int64_t d0 = std::max(t0, t1 - static_cast<std::int64_t>(std::llround(s.draft_ns)));
    fmt::format_to(std::back_inserter(out),
                   ",\n{{\"name\":\"draft\",\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{}}}", pid,
                   k_steps_tid, Us{d0}, Us{t1 - d0});
  }
  const auto counter = [&](const char* name, std::int64_t ts, const char* series, double value) {
    fmt::format_to(std::back_inserter(out),
                   ",\n{{\"name\":\"{}\",\"ph\":\"C\",\"pid\":{},\"ts\":{},\"args\":{{\"{}\":{:.3f}}}}}", name, pid,
                   Us{ts}, series, value);
  };
  counter("queued requests", t0, "queued", static_cast<double>(s.queued_requests));
  counter("running requests", t0, "running", static_cast<double>(s.running_requests));
  counter("KV cache use (%)", t0, "used", 100.0 * s.kv_used_fraction());
  if (s.cached_tokens > 0) {
    // Prefix-cache hits admitted by this step, back to zero at its end (only steps with hits carry one).
    counter("prefix cache hit tokens", t0, "cached", static_cast<double>(s.cached_tokens));
    counter("prefix cache hit tokens", t1, "cached", 0.0);
  }
  // Bytes per ns are GB/s: the step's all-to-all traffic over its duration, per link level.
  const double dur_ns = std::max(s.duration_ns, 1.0);
  counter("intra-node all-to-all (GB/s)", t0, "GB/s", s.intra_bytes / dur_ns);
  counter("inter-node all-to-all (GB/s)", t0, "GB/s", s.inter_bytes / dur_ns);
  counter("all-to-all in flight (MB)", t0, "MB", (s.intra_bytes + s.inter_bytes) / 1e6);
  // Utilisation over the whole step (the all-to-all phases are a part of it): a level near 100 % is
  // the bottleneck of the step, not only of its collectives.
  const LinkCapacity cap = static_cast<std::size_t>(s.group) < capacity_.size()
                               ? capacity_[static_cast<std::size_t>(s.group)]
                               : LinkCapacity{};
  if (cap.intra_gbps > 0.0) {
    counter("intra-node link use (%)", t0, "used", 100.0 * s.intra_bytes / (dur_ns * cap.intra_gbps));
  }
  if (cap.inter_gbps > 0.0) {
    counter("inter-node link use (%)", t0, "used", 100.0 * s.inter_bytes / (dur_ns * cap.inter_gbps));
  }
  counter("intra-node all-to-all (GB/s)", t1, "GB/s", 0.0);
  counter("inter-node all-to-all (GB/s)", t1, "GB/s", 0.0);
  counter("all-to-all in flight (MB)", t1, "MB", 0.0);
  if (cap.intra_gbps > 0.0) {
    counter("intra-node link use (%)", t1, "used", 0.0);
  }
  if (cap.inter_gbps > 0.0) {
    counter("inter-node link use (%)", t1, "used", 0.0);
  }
  bytes_ += out.size();
  chunks_.push_back({s.group, s.step, std::move(out)});
  out = std::string();
  if (static_cast<std::int64_t>(bytes_ + other_bytes()) > max_bytes_) {
    shrink();
  }
}

void TimelineLog::shrink() {
  // Every stride-th step of each group stays; past the first step there is always one more to drop.
  while (static_cast<std::int64_t>(bytes_ + other_bytes()) > max_bytes_ &&
         std::any_of(chunks_.begin(), chunks_.end(), [](const Chunk& c) { return c.step > 0; })) {
    stride_ *= 2;
    std::erase_if(chunks_, [this](const Chunk& c) { return c.step % stride_ != 0; });
    bytes_ = 0;
    for (const Chunk& c : chunks_) {
      bytes_ += c.text.size();
    }
  }
}

void TimelineLog::on_migration(int group, core::Time start_ns, core::Time end_ns, double bytes) {
  std::string& out = open(group);
  std::int64_t& track_end = track_end_ns_[{group, k_migrations_tid}];
  const std::int64_t begin = std::max(start_ns, track_end);
  const std::int64_t end = std::max(end_ns, begin);
  track_end = end;
  fmt::format_to(std::back_inserter(out),
                 ",\n{{\"name\":\"migration\",\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{},\"args\":{{"
                 "\"bytes\":{:.0f}}}}}",
                 group, k_migrations_tid, Us{begin}, Us{end - begin}, bytes);
}

void TimelineLog::on_arrival(const RequestState& r) {
  fmt::format_to(std::back_inserter(open(r.group)),
                 ",\n{{\"name\":\"arrival\",\"ph\":\"i\",\"s\":\"p\",\"pid\":{},\"tid\":{},\"ts\":{},\"args\":{{"
                 "\"request\":{},\"rank\":{},\"prompt_tokens\":{},\"rejected\":{}}}}}",
                 r.group, k_events_tid, Us{r.spec.arrival_ns}, r.spec.id, r.rank, r.spec.prompt_tokens,
                 r.rejected ? 1 : 0);
}

void TimelineLog::on_preemption(const RequestState& r, core::Time now_ns) {
  fmt::format_to(std::back_inserter(open(r.group)),
                 ",\n{{\"name\":\"preemption\",\"ph\":\"i\",\"s\":\"p\",\"pid\":{},\"tid\":{},\"ts\":{},\"args\":{{"
                 "\"request\":{},\"rank\":{}}}}}",
                 r.group, k_events_tid, Us{now_ns}, r.spec.id, r.rank);
}

void TimelineLog::on_rebalance(int group, core::Time time_ns, policies::RebalanceKind kind) {
  fmt::format_to(std::back_inserter(open(group)),
                 ",\n{{\"name\":\"{}\",\"ph\":\"i\",\"s\":\"p\",\"pid\":{},\"tid\":{},\"ts\":{}}}",
                 policies::to_string(kind), group, k_events_tid, Us{time_ns});
}

std::size_t TimelineLog::other_bytes() const {
  // The header with the sampling note (under 1 KiB), each process's and thread's names (a thread's name
  // and sort index take under 200 bytes), and what is still open: it is written out too.
  std::size_t open = 0;
  for (const std::string& o : open_) {
    open += o.size();
  }
  return 1024 + static_cast<std::size_t>(max_group_ + 1) * static_cast<std::size_t>(max_gpus_ + 4) * 200 + open;
}

std::string TimelineLog::sampling_note() const {
  if (stride_ == 1) {
    return {};
  }
  return fmt::format(
      "timeline.json: kept {} of {} steps (stride {}: the steps of each group whose index is a multiple of it) to "
      "stay under output.timeline_max_mib = {:.3f} MiB; raise it to keep every step",
      steps_kept(), steps_recorded_, stride_, static_cast<double>(max_bytes_) / (1024.0 * 1024.0));
}

std::string TimelineLog::json() const {
  std::string out = "{\"displayTimeUnit\":\"ns\",\"otherData\":{";
  fmt::format_to(std::back_inserter(out), "\"steps_recorded\":{},\"steps_kept\":{},\"step_stride\":{}", steps_recorded_,
                 steps_kept(), stride_);
  if (stride_ > 1) {
    fmt::format_to(std::back_inserter(out), ",\"sampling\":\"{}\"", sampling_note());
  }
  out += "},\"traceEvents\":[\n";
  const auto thread = [&](int pid, int tid, std::string_view name, int sort_index) {
    fmt::format_to(
        std::back_inserter(out),
        ",\n{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":\"{}\"}}}},\n"
        "{{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":{},\"tid\":{},\"args\":{{\"sort_index\":{}}}}}",
        pid, tid, name, pid, tid, sort_index);
  };
  for (int p = 0; p <= max_group_; ++p) {
    fmt::format_to(std::back_inserter(out),
                   "{}{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{},\"args\":{{\"name\":\"EP group {}\"}}}}",
                   p == 0 ? "" : ",\n", p, p);
    thread(p, k_steps_tid, "steps", -3);
    thread(p, k_events_tid, "events", -2);
    thread(p, k_migrations_tid, "migrations", -1);
    // A group's own GPUs (pools may differ); one that recorded no layer gets the largest group's.
    const int gpus = static_cast<std::size_t>(p) < gpus_.size() && gpus_[static_cast<std::size_t>(p)] > 0
                         ? gpus_[static_cast<std::size_t>(p)]
                         : max_gpus_;
    for (int g = 0; g < gpus; ++g) {
      thread(p, g, fmt::format("GPU {}", g), g);
    }
  }
  for (const Chunk& c : chunks_) {
    out += c.text;
  }
  // What came after a group's last step (a final rebalance, a step cut off by the end of the run) goes
  // with the step that would have come next.
  for (std::size_t g = 0; g < open_.size(); ++g) {
    if (recorded(next_step_[g])) {
      out += open_[g];
    }
  }
  out += "\n]}\n";
  return out;
}

}  // namespace epsim::serving
