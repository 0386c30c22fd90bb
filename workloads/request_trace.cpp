// SPDX-License-Identifier: Apache-2.0
#include "workloads/request_trace.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/error.hpp"
#include "core/time.hpp"
#include "workloads/request_trace_readers.hpp"

namespace epsim::workloads {

namespace {

const std::array<TraceFormatEntry, 4> k_formats{{
    {TraceFormat::csv, "csv", "lines arrival_s or arrival_s,prompt_tokens,output_tokens", open_csv_rows},
    {TraceFormat::mooncake, "mooncake",
     "JSON lines {\"timestamp\": ms, \"input_length\": n, \"output_length\": n, \"hash_ids\": [...]}",
     open_mooncake_rows},
    {TraceFormat::azure, "azure", "lines TIMESTAMP,ContextTokens,GeneratedTokens", open_azure_rows},
    {TraceFormat::burstgpt, "burstgpt", "lines Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type",
     open_burstgpt_rows},
}};

}  // namespace

ReplayOptions parse_replay_options(core::ParamTable& t) {
  ReplayOptions o;
  o.format = t.choice<TraceFormat>("replay_format", TraceFormat::csv,
                                   "replay: the replay_file's format (docs/workloads.md, Request traces)",
                                   k_trace_format_choices);
  o.speedup = t.real("replay_speedup", 1.0,
                     "replay: arrivals this many times faster than recorded (arrival = (trace time - "
                     "replay_start_s) / replay_speedup)",
                     {1e-6, 1e6});
  o.start_s = t.real("replay_start_s", 0.0, "replay: skip the rows recorded before this trace time, s", core::k_time_s);
  o.window_s = t.real("replay_window_s", 0.0,
                      "replay: end at the first row recorded at or after replay_start_s + this, s (0 = the "
                      "file's end)",
                      core::k_time_s);
  o.block_tokens = t.integer("replay_block_tokens", 512,
                             "replay, mooncake: tokens per hash id (the trace's 512; a row's last block is the "
                             "remainder)",
                             {1, k_max_request_tokens});
  o.model = t.string("replay_model", "", "replay, burstgpt: keep only the rows of this Model (\"\" = every row)");
  return o;
}

const TraceFormatEntry& trace_format(TraceFormat f) {
  for (const TraceFormatEntry& e : k_formats) {
    if (e.format == f) {
      return e;
    }
  }
  throw core::Error("request trace: unregistered format");  // every enumerator has an entry
}

std::optional<TraceFormat> trace_format_named(std::string_view name) {
  for (const TraceFormatEntry& e : k_formats) {
    if (e.name == name) {
      return e.format;
    }
  }
  return std::nullopt;
}

std::string trace_format_names() {
  std::string names;
  for (const TraceFormatEntry& e : k_formats) {
    names += names.empty() ? "" : ", ";
    names += e.name;
  }
  return names;
}

RequestTrace::RequestTrace(const std::string& file, const ReplayOptions& o) : file_(file), options_(o), in_(file) {
  if (!in_) {
    throw core::Error(file + ": cannot open the arrival replay file");
  }
  reader_ = trace_format(o.format).open(in_, file, o);
}

std::optional<RequestSpec> RequestTrace::next() {
  while (!ended_ && reader_->next(row_)) {
    const auto fail = [&](const std::string& what) {
      return core::Error(fmt::format("{}: line {}: {}", file_, reader_->line_no(), what));
    };
    if (rows_ > 0 && row_.time_s < last_time_s_) {
      throw fail("arrival times must be non-decreasing");  // the traces are recorded in order: sort first
    }
    if (!(row_.time_s >= 0.0 && row_.time_s <= core::k_max_time_s)) {
      throw fail(fmt::format("arrival time {:g} s is outside [0, {:g}] s", row_.time_s, core::k_max_time_s));
    }
    last_time_s_ = row_.time_s;
    ++rows_;
    if (row_.time_s < options_.start_s) {
      ++before_window_;
      continue;
    }
    if (options_.window_s > 0.0 && row_.time_s >= options_.start_s + options_.window_s) {
      ended_ = true;  // rows are in order: none after this one is inside the window
      break;
    }
    const double arrival_s = (row_.time_s - options_.start_s) / options_.speedup;
    if (arrival_s > core::k_max_time_s) {
      throw fail(fmt::format("arrival {:g} s after replay_speedup is past the {:g} s a run may last", arrival_s,
                             core::k_max_time_s));
    }
    RequestSpec r;
    r.arrival_ns = core::from_seconds(arrival_s);
    r.prompt_tokens = row_.prompt_tokens;
    r.output_tokens = row_.output_tokens;
    r.content = std::move(row_.content);
    ++returned_;
    return r;
  }
  if (returned_ == 0) {  // a run of no requests would look like a result
    if (rows_ == 0) {
      throw core::Error(
          fmt::format("{}: no arrival rows (expected {})", file_, trace_format(options_.format).expected));
    }
    throw core::Error(fmt::format(
        "{}: none of its {} rows is inside the replay window [{:g}, {}) s", file_, rows_, options_.start_s,
        options_.window_s > 0.0 ? fmt::format("{:g}", options_.start_s + options_.window_s) : std::string("end")));
  }
  return std::nullopt;
}

}  // namespace epsim::workloads
