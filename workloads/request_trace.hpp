// SPDX-License-Identifier: Apache-2.0
#pragma once
// Request traces replayed open loop ([workload] arrival = "replay"): a registry of file formats (epsim's
// CSV, Mooncake's JSONL, Azure's LLM inference CSVs, BurstGPT), each read one row at a time by its own
// reader (request_trace_readers.hpp), and RequestTrace, which turns rows into requests: the time window,
// the speed-up, the order check, and "no rows" as an error rather than an empty run.
#include <array>
#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/params.hpp"
#include "workloads/request.hpp"

namespace epsim::workloads {

enum class TraceFormat : std::uint8_t { csv, mooncake, azure, burstgpt };

inline constexpr std::array<core::Choice<TraceFormat>, 4> k_trace_format_choices{{{"csv", TraceFormat::csv},
                                                                                  {"mooncake", TraceFormat::mooncake},
                                                                                  {"azure", TraceFormat::azure},
                                                                                  {"burstgpt", TraceFormat::burstgpt}}};

/// How a replayed file is read: the [workload] replay_* keys.
struct ReplayOptions {
  TraceFormat format = TraceFormat::csv;
  double speedup = 1.0;             ///< arrival = (trace time - start_s) / speedup
  double start_s = 0.0;             ///< rows recorded before this trace time are skipped
  double window_s = 0.0;            ///< rows recorded at or after start_s + window_s end the replay (0: none)
  std::int64_t block_tokens = 512;  ///< mooncake: tokens per hash id (the last one of a row: the remainder)
  std::string model;                ///< burstgpt: keep only rows of this Model ("": every row)
};

/// Reads the replay_* keys of [workload] (replay_file is read with the arrival keys).
ReplayOptions parse_replay_options(core::ParamTable& t);

/// One row as a trace records it.
struct TraceRow {
  double time_s = 0.0;             ///< trace time, s from the trace's origin
  std::int64_t prompt_tokens = 0;  ///< 0 with output_tokens 0: the row has no lengths (an arrival-only CSV)
  std::int64_t output_tokens = 0;
  std::vector<ContentSegment> content;  ///< the prompt's blocks (Mooncake); empty: no prefix information
};

/// Reads one format's rows, one at a time.
class TraceRowReader {
 public:
  virtual ~TraceRowReader() = default;
  /// The next row into `row` (cleared first); false at the end of the file. Throws core::Error
  /// "FILE: line N: what was expected" on a malformed row.
  virtual bool next(TraceRow& row) = 0;
  /// 1-based line of the row last returned.
  virtual std::int64_t line_no() const = 0;
  /// Rows read but skipped because the format says they are no request (BurstGPT's failures) or an
  /// option filters them out (BurstGPT's model); and what they were, with their counts ("" for none).
  virtual std::int64_t skipped_rows() const { return 0; }
  virtual std::string skipped_what() const { return ""; }
};

/// One registered format: its reader, and what its rows look like (for "no rows" errors and help).
struct TraceFormatEntry {
  TraceFormat format;
  std::string_view name;
  std::string_view expected;  ///< the rows it reads, in words
  std::unique_ptr<TraceRowReader> (*open)(std::istream& in, const std::string& source, const ReplayOptions& o);
};

/// The registered format `f`.
const TraceFormatEntry& trace_format(TraceFormat f);
/// The format named `name` (nullopt when there is none), and the names, comma-separated, for messages.
std::optional<TraceFormat> trace_format_named(std::string_view name);
std::string trace_format_names();

/// A replayed file's requests, in arrival order, one at a time.
class RequestTrace {
 public:
  /// Opens `file`; throws core::Error "FILE: cannot open the arrival replay file" when it cannot.
  RequestTrace(const std::string& file, const ReplayOptions& o);
  /// The next request inside the window (id 0; prompt_tokens 0 when the row has no lengths), or nullopt
  /// at the end of the file or the window. Throws core::Error naming the file and line on a malformed or
  /// out-of-order row, and naming the file when it had no row (or none inside the window).
  std::optional<RequestSpec> next();
  /// Rows skipped so far: the reader's (skipped_what) and those before the window's start.
  std::int64_t skipped_rows() const { return reader_->skipped_rows(); }
  std::string skipped_what() const { return reader_->skipped_what(); }
  std::int64_t rows_before_window() const { return before_window_; }

 private:
  std::string file_;
  ReplayOptions options_;
  std::ifstream in_;
  std::unique_ptr<TraceRowReader> reader_;
  TraceRow row_;
  double last_time_s_ = 0.0;
  std::int64_t rows_ = 0;  // rows read (window or not)
  std::int64_t before_window_ = 0;
  std::int64_t returned_ = 0;
  bool ended_ = false;
};

}  // namespace epsim::workloads
