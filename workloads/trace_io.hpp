// SPDX-License-Identifier: Apache-2.0
#pragma once
// Streaming reader and writer of routing traces (workloads/routing_trace.proto): neither ever holds more
// than one step. Every step is validated as it is read; errors name the file, the step and the layer.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "core/signal_cleanup.hpp"
#include "workloads/routing_trace.pb.h"

namespace epsim::workloads {

inline constexpr char k_trace_magic[9] = "EPSIMRT1";

class TraceWriter {
 public:
  /// Starts writing `path` (through a temporary file renamed into place by close()).
  TraceWriter(std::filesystem::path path, const trace::Header& header);
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  /// Validates `step` against the header and appends it.
  void write(const trace::Step& step);
  /// Flushes and renames the file into place; without close() nothing appears at `path`.
  void close();
  std::int64_t steps() const { return steps_; }

 private:
  std::filesystem::path path_;
  std::filesystem::path tmp_;
  std::unique_ptr<core::SignalCleanup> on_signal_;  // removes tmp_ on SIGINT / SIGTERM
  trace::Header header_;
  std::ofstream out_;
  std::string buffer_;
  std::int64_t steps_ = 0;
  bool closed_ = false;
};

class TraceReader {
 public:
  explicit TraceReader(std::filesystem::path path);
  ~TraceReader();
  TraceReader(const TraceReader&) = delete;
  TraceReader& operator=(const TraceReader&) = delete;

  const trace::Header& header() const { return header_; }
  /// Reads the next step into `step`; false at the end of the trace. Throws core::Error on a truncated
  /// or inconsistent step.
  bool next(trace::Step& step);
  /// Starts again from the first step.
  void rewind();
  std::int64_t steps_read() const { return steps_read_; }

 private:
  void open();
  bool read_message(google::protobuf::MessageLite& msg, bool eof_ok);

  std::filesystem::path path_;
  std::ifstream in_;
  std::uint64_t file_bytes_ = 0;  // a message may not claim more than the bytes left
  std::string buffer_;
  trace::Header header_;
  std::int64_t steps_read_ = 0;
  std::vector<std::uint32_t> id_counts_;  // validate_step's workspace: no allocation per step
};

/// Bounds on a trace header's shape, far beyond any model, so that a corrupt header cannot make a
/// reader allocate out of proportion to the file (a 37-byte header once claimed 200,000 layers).
inline constexpr std::uint32_t k_max_trace_layers = 4096;
inline constexpr std::uint32_t k_max_trace_experts = 65536;

/// Checks a step against its header; throws core::Error("<where>: step N, layer L: ...").
void validate_step(const trace::Header& h, const trace::Step& s, const std::string& where);
/// The same, tallying token ids in `id_counts` (resized to the experts; reused by a reader's every step).
void validate_step(const trace::Header& h, const trace::Step& s, const std::string& where,
                   std::vector<std::uint32_t>& id_counts);

}  // namespace epsim::workloads
