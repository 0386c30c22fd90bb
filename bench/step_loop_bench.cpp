// Step-loop throughput: whole simulations of shipped-style configs, reporting engine steps per wall
// second and simulated seconds per wall second (the "x real time" figure).
//   Qwen3-235B-A22B on 8 H200 (one node, EP8);  DeepSeek-V3 on 64 H200 (8 nodes, EP64).
#include <fmt/format.h>

#include <chrono>

#include "experiments/build_simulation.hpp"
#include "experiments/experiment_config.hpp"

using namespace epsim;

namespace {

constexpr const char* k_base = R"(
[run]
seed = 1
max_sim_time_s = 3600.0
[gpu]
preset = "h200"
[workload.prompt_tokens]
distribution = "lognormal"
mean = 1024
cv = 0.5
min = 16
max = 8192
[workload.output_tokens]
distribution = "lognormal"
mean = 256
cv = 0.5
min = 8
max = 2048
[routing]
zipf_exponent = 0.8
[scheduler]
max_batch_tokens = 4096
max_running_requests = 128
step_overhead_us = 200.0
)";

void bench(const std::string& label, const std::vector<std::string>& sets) {
  const auto cfg = experiments::load_config_text(k_base, "bench", sets);
  const auto t0 = std::chrono::steady_clock::now();
  serving::Simulator sim(experiments::build_simulation(cfg));
  const auto res = sim.run();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto& s = res.summary;
  fmt::print(
      "{:<34} {:>7} steps in {:6.2f} s wall: {:>8.0f} steps/s, {:>7.1f} simulated s / wall s "
      "(mean step {:.2f} ms, {} requests)\n",
      label, s.steps, wall, static_cast<double>(s.steps) / wall, s.makespan_s / wall, s.mean_step_ms,
      s.requests_finished);
}

}  // namespace

int main() {
  bench("Qwen3-235B-A22B, 8 x H200, EP8",
        {"model.preset=\"qwen3-235b-a22b\"", "cluster.nodes=1", "cluster.gpus_per_node=8", "workload.rate_rps=12",
         "workload.num_requests=1500"});
  bench("DeepSeek-V3, 64 x H200 (8 nodes), EP64",
        {"model.preset=\"deepseek-v3\"", "cluster.nodes=8", "cluster.gpus_per_node=8", "workload.rate_rps=60",
         "workload.num_requests=4000"});
  return 0;
}
