// SPDX-License-Identifier: Apache-2.0
#include "workloads/request_trace_stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>
#include <vector>

#include "core/error.hpp"
#include "core/statistics.hpp"
#include "core/time.hpp"
#include "workloads/workload_bounds.hpp"

namespace epsim::workloads {

namespace {

LengthPercentiles percentiles(std::vector<double>& values) {
  LengthPercentiles p;
  if (values.empty()) {
    return p;
  }
  double sum = 0.0;
  for (const double v : values) {
    sum += v;
  }
  p.mean = sum / static_cast<double>(values.size());
  p.p50 = core::quantile_inplace(values, 0.50);  // sorts once; the later calls find it sorted
  p.p90 = core::quantile_inplace(values, 0.90);
  p.p99 = core::quantile_inplace(values, 0.99);
  p.max = values.back();
  return p;
}

}  // namespace

RequestTraceStats compute_request_trace_stats(const std::string& file, const ReplayOptions& o,
                                              std::int64_t max_requests, std::size_t max_blocks) {
  RequestTraceStats s;
  s.file = file;
  s.format = o.format;
  const std::int64_t cap = max_requests > 0 ? std::min(max_requests, k_max_requests) : k_max_requests;
  RequestTrace trace(file, o);
  std::vector<double> prompts;
  std::vector<double> outputs;
  std::unordered_set<std::uint64_t> seen;
  std::vector<std::uint64_t> row_ids;
  while (s.requests < cap) {
    std::optional<RequestSpec> r = trace.next();
    if (!r) {
      break;
    }
    const RequestSpec& req = *r;
    const double at_s = core::to_seconds(req.arrival_ns);
    if (s.requests == 0) {
      s.first_arrival_s = at_s;
    }
    s.last_arrival_s = at_s;
    ++s.requests;
    if (req.prompt_tokens > 0) {
      ++s.requests_with_lengths;
      prompts.push_back(static_cast<double>(req.prompt_tokens));
      outputs.push_back(static_cast<double>(req.output_tokens));
      s.prompt_tokens += req.prompt_tokens;
    }
    if (req.content.empty()) {
      continue;
    }
    // An engine's prefix cache reuses a prompt's leading blocks while they are cached: the run of blocks
    // from the first one that earlier requests brought. The ids of this prompt join the cache after it.
    s.has_blocks = true;
    bool leading = true;
    for (const ContentSegment& seg : req.content) {
      leading = leading && seen.contains(seg.id);
      if (leading) {
        s.ideal_hit_tokens += seg.tokens;
      }
    }
    for (const ContentSegment& seg : req.content) {
      seen.insert(seg.id);
    }
    if (seen.size() > max_blocks) {
      throw core::Error(
          fmt::format("{}: more than {} distinct block ids by request {}: the ideal hit rate's "
                      "memory is bounded (use --num-requests or a window)",
                      file, max_blocks, s.requests));
    }
  }
  s.rows_before_window = trace.rows_before_window();
  s.skipped_rows = trace.skipped_rows();
  s.skipped_what = trace.skipped_what();
  s.duration_s = s.last_arrival_s - s.first_arrival_s;
  s.mean_rate_rps = s.duration_s > 0.0 ? static_cast<double>(s.requests - 1) / s.duration_s : 0.0;
  s.distinct_blocks = static_cast<std::int64_t>(seen.size());
  s.ideal_hit_rate =
      s.prompt_tokens > 0 ? static_cast<double>(s.ideal_hit_tokens) / static_cast<double>(s.prompt_tokens) : 0.0;
  s.prompt = percentiles(prompts);
  s.output = percentiles(outputs);
  return s;
}

std::string format_request_trace_stats(const RequestTraceStats& s) {
  std::string out;
  auto line = [&]<class... A>(fmt::format_string<A...> f, A&&... args) {
    fmt::format_to(std::back_inserter(out), f, std::forward<A>(args)...);
  };
  line("{} ({})\n", s.file, trace_format(s.format).name);
  line("requests            {}\n", s.requests);
  if (s.rows_before_window > 0) {
    line("before the window   {} rows (replay_start_s)\n", s.rows_before_window);
  }
  if (s.skipped_rows > 0) {
    line("skipped             {} rows: {}\n", s.skipped_rows, s.skipped_what);
  }
  line("arrivals            {:.3f} s to {:.3f} s ({:.3f} s)\n", s.first_arrival_s, s.last_arrival_s, s.duration_s);
  line("mean rate           {:.4g} req/s\n", s.mean_rate_rps);
  if (s.requests_with_lengths == 0) {
    line(
        "lengths             none in the file (a run draws them from [workload.prompt_tokens] / "
        "[workload.output_tokens])\n");
  } else {
    line("{:<19} {:>10} {:>10} {:>10} {:>10} {:>10}\n", "tokens", "mean", "p50", "p90", "p99", "max");
    for (const auto& [name, p] : {std::pair{"prompt", s.prompt}, std::pair{"output", s.output}}) {
      line("{:<19} {:>10.1f} {:>10.1f} {:>10.1f} {:>10.1f} {:>10.0f}\n", name, p.mean, p.p50, p.p90, p.p99, p.max);
    }
  }
  if (s.has_blocks) {
    line("distinct blocks     {}\n", s.distinct_blocks);
    line("ideal hit rate      {:.4f} ({} of {} prompt tokens in leading blocks seen before; infinite cache)\n",
         s.ideal_hit_rate, s.ideal_hit_tokens, s.prompt_tokens);
  }
  return out;
}

}  // namespace epsim::workloads
