// SPDX-License-Identifier: Apache-2.0
// The request-trace readers (first byte: 0 Mooncake JSONL, 1 Azure LLM inference CSV, 2 BurstGPT CSV),
// read whole through `epsim workload stats`'s code: the reader, the window and order checks, the
// ideal-hit-rate's block set. (epsim's own replay CSV has its harness: replay.)
#include <array>
#include <cstddef>
#include <cstdint>

#include "core/error.hpp"
#include "fuzz/fuzz_input.hpp"
#include "workloads/request_trace_stats.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using epsim::workloads::TraceFormat;
  static constexpr std::array<TraceFormat, 3> k_formats{TraceFormat::mooncake, TraceFormat::azure,
                                                        TraceFormat::burstgpt};
  epsim::fuzz::Selected in;
  if (!epsim::fuzz::select(data, size, k_formats.size(), in)) {
    return 0;
  }
  epsim::workloads::ReplayOptions o;
  o.format = k_formats[in.choice];
  o.block_tokens = 16;  // small blocks: short inputs reach the segment and id checks
  try {
    epsim::workloads::compute_request_trace_stats(epsim::fuzz::input_file(in.data, in.size, ".trace").string(), o,
                                                  100000, std::size_t{1} << 16);
  } catch (const epsim::core::Error&) {
  }
  return 0;
}
