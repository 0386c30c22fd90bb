// SPDX-License-Identifier: Apache-2.0
// Prefix caching's cost to the simulator (issue 38): one multi-turn chat workload (sessions preset
// "chat", a shared system prompt) run with the prefix cache off and on, CPU seconds of each and their
// ratio. The cache keys every full block a request computes and looks up every admission's prompt, so
// its cost grows with the tokens served, not the steps; the target is at most 2x the run without it.
//   prefix_cache_bench [TURNS]     (default 100000)
#include <fmt/format.h>

#include <ctime>
#include <string>
#include <vector>

#include "experiments/assembly/build_simulation.hpp"
#include "experiments/assembly/experiment_config.hpp"
#include "experiments/assembly/load_window.hpp"
#include "sim/simulator.hpp"

using namespace epsim;

namespace {

constexpr const char* k_config = R"(
[run]
seed = 1
max_sim_time_s = 86400.0
[model]
preset = "qwen3-30b-a3b"
[cluster]
preset = "hgx-h200"
nodes = 1
[parallel]
ep_size = 8
[workload]
rate_rps = 4.0
[workload.sessions]
kind = "synthetic"
preset = "chat"
[workload.shared_prefix]
prompts = 8
[scheduler]
max_batch_tokens = 8192
max_running_requests = 256
)";

struct Timed {
  double cpu_s = 0.0;
  serving::SimulationResult result;
};

Timed run(std::int64_t turns, bool cached) {
  std::vector<std::string> sets{fmt::format("workload.num_requests={}", turns)};
  if (cached) {
    sets.emplace_back("prefix_cache.enabled=true");
  }
  const auto cfg = experiments::load_config_text(k_config, "bench", sets);
  const std::clock_t c0 = std::clock();
  serving::Simulator sim(experiments::build_simulation(cfg, experiments::profile_pool_windows(cfg)));
  Timed t;
  t.result = sim.run();
  t.cpu_s = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t turns = argc > 1 ? std::stoll(argv[1]) : 100000;
  const Timed off = run(turns, false);
  const Timed on = run(turns, true);
  const auto line = [](const char* label, const Timed& t) {
    const auto& s = t.result.summary;
    fmt::print("{:<18} {:>8} requests {:>8} steps in {:7.2f} CPU s; TTFT p50 {:.1f} ms, makespan {:.0f} s{}\n", label,
               s.requests_finished, s.steps, t.cpu_s, s.ttft_ms.p50, s.makespan_s,
               t.result.prefix_cache.enabled
                   ? fmt::format(", hit rate {:.3f} of prompt tokens", t.result.prefix_cache.hit_rate_tokens())
                   : std::string());
  };
  line("prefix cache off", off);
  line("prefix cache on", on);
  fmt::print("CPU time on / off: {:.2f} (target <= 2)\n", on.cpu_s / off.cpu_s);
  return 0;
}
