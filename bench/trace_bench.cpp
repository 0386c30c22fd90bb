// SPDX-License-Identifier: Apache-2.0
// Routing-trace throughput for DeepSeek-V3 shapes (58 MoE layers x 256 experts, top-8): synthetic
// generation (steps/s), writing, and streaming reads with validation (steps/s, MB/s).
#include <fmt/format.h>

#include <chrono>
#include <filesystem>

#include "workloads/trace_io.hpp"
#include "workloads/trace_tools.hpp"

using namespace epsim;
using namespace epsim::workloads;

namespace {
double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

int main() {
  const auto path = std::filesystem::temp_directory_path() / "epsim_trace_bench.trace";
  SyntheticRouterConfig c;
  c.temporal_groups = 2;
  for (const std::int64_t tokens : {64, 512, 4096}) {
    SyntheticRouter router(c, 58, 256, 8, core::RandomStreams(1));
    SynthesisOptions o;
    o.tokens = tokens;
    o.steps = tokens >= 4096 ? 300 : 1000;
    // Generation alone.
    auto t0 = std::chrono::steady_clock::now();
    std::int64_t bytes = 0;
    for (std::int64_t s = 0; s < o.steps; ++s) {
      bytes += static_cast<std::int64_t>(synthesize_step(router, s, o).ByteSizeLong());
    }
    const double gen_s = seconds_since(t0);
    // Generation + writing.
    t0 = std::chrono::steady_clock::now();
    generate_trace(path, router, "deepseek-v3", o);
    const double write_s = seconds_since(t0);
    // Streaming read with validation.
    t0 = std::chrono::steady_clock::now();
    TraceReader r(path);
    trace::Step step;
    std::int64_t n = 0;
    while (r.next(step)) {
      ++n;
    }
    const double read_s = seconds_since(t0);
    const double mb = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
    fmt::print(
        "{:>5} tokens/step: generate {:>7.0f} steps/s ({:.1f} us per layer); generate+write {:>7.0f} steps/s; "
        "read {:>7.0f} steps/s ({:.0f} MB/s, {:.1f} kB/step)\n",
        tokens, static_cast<double>(o.steps) / gen_s, gen_s / static_cast<double>(o.steps) / 58.0 * 1e6,
        static_cast<double>(o.steps) / write_s, static_cast<double>(n) / read_s, mb / read_s,
        static_cast<double>(bytes) / static_cast<double>(o.steps) / 1e3);
  }
  std::filesystem::remove(path);
  return 0;
}
