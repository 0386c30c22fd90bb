// SPDX-License-Identifier: Apache-2.0
// Issue 40's opt-in routing modes end to end, routing.sampling = "fast" (approximate) and "poisson" (exact): over a few
// seeds its headline means agree with exact sampling's within the seeds' own spread, and it is never the default. (The
// draws' means and variances: tests/workloads/synthetic_router_test.cpp; the mode's measured speed and error on
// DeepSeek-V3 EP64: bench/fast_sampling.py and bench/README.md.)
#include <catch2/catch.hpp>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/statistics.hpp"
#include "experiments/assembly/build_simulation.hpp"
#include "experiments/assembly/experiment_config.hpp"
#include "experiments/assembly/results_writer.hpp"
#include "sim/simulator.hpp"

using namespace epsim;

namespace {

// tests/data/small.toml (Mixtral-8x7B, top-2 of 8 experts, EP4, prompts up to 1,024 tokens in batches of
// up to 2,048): a prefill's conditional binomials (n = tokens x 2 picks, q ~ 1/8) have variance >= 25,
// so the fast mode draws them from the normal.
nlohmann::json run_small(int seed, const std::string& sampling) {
  const auto cfg = experiments::load_config(
      std::string(EPSIM_TEST_DATA_DIR) + "/small.toml",
      {"run.seed=" + std::to_string(seed), "workload.num_requests=100", "routing.sampling=\"" + sampling + "\""});
  serving::Simulator sim(experiments::build_simulation(cfg, experiments::profile_pool_windows(cfg)));
  return nlohmann::json::parse(experiments::summary_json(cfg, sim.run()))["metrics"];
}

// A mode's headline means against exact sampling's over a few seeds.
void check_agrees_with_exact(const std::string& mode) {
  const int seeds = 8;
  // Headline metrics of summary.json, as JSON pointers into "metrics".
  const std::vector<std::string> metrics{
      "/ttft_ms/mean",    "/tpot_ms/mean",          "/e2e_ms/mean",           "/ttft_ms/p90",  "/slo/attainment",
      "/slo/goodput_rps", "/straggler_gap_us/mean", "/barrier_idle_fraction", "/mean_step_ms", "/steps"};
  std::vector<core::RunningStats> exact(metrics.size());
  std::vector<core::RunningStats> fast(metrics.size());
  int differing_runs = 0;
  for (int seed = 1; seed <= seeds; ++seed) {
    const auto e = run_small(seed, "exact");
    const auto f = run_small(seed, mode);
    differing_runs += e != f ? 1 : 0;
    for (std::size_t m = 0; m < metrics.size(); ++m) {
      exact[m].add(e.at(nlohmann::json::json_pointer(metrics[m])).get<double>());
      fast[m].add(f.at(nlohmann::json::json_pointer(metrics[m])).get<double>());
    }
  }
  // The mode engages here (otherwise the comparison below would be vacuous).
  REQUIRE(differing_runs == seeds);
  for (std::size_t m = 0; m < metrics.size(); ++m) {
    // Two independent samples of `seeds` runs: the standard error of the difference of the means from
    // their own spreads; a bias of 4 of them is far outside the noise (normal tail ~6e-5, t with ~14
    // degrees of freedom ~1e-3). A metric constant over the seeds in both modes must agree exactly.
    const double se = std::sqrt((exact[m].variance() + fast[m].variance()) / seeds);
    INFO(metrics[m] << ": exact " << exact[m].mean() << ", fast " << fast[m].mean() << ", s.e. of the difference "
                    << se);
    CHECK(std::abs(fast[m].mean() - exact[m].mean()) <= 4.0 * se + 1e-12 * std::abs(exact[m].mean()));
  }
}

}  // namespace

TEST_CASE("fast sampling's headline means agree with exact within the seed spread") {
  check_agrees_with_exact("fast");
}

// The Poissonised draw is exact: other random numbers, the same distribution.
TEST_CASE("poisson sampling's headline means agree with exact within the seed spread") {
  check_agrees_with_exact("poisson");
}

TEST_CASE("fast sampling is opt-in: an empty routing section samples exactly") {
  // A model and a GPU are the required sections; [routing] itself stays empty.
  const std::string k_model = "[model]\npreset = \"mixtral-8x7b\"\n[gpu]\npreset = \"h100\"\n";
  const auto empty = experiments::load_config_text(k_model + "[routing]\n", "empty-routing", {});
  CHECK(empty.routing.synthetic.sampling == workloads::RoutingSampling::exact);
  const auto fast = experiments::load_config_text(k_model + "[routing]\nsampling = \"fast\"\n", "fast-routing", {});
  CHECK(fast.routing.synthetic.sampling == workloads::RoutingSampling::fast);
  const auto exact = experiments::load_config_text(k_model + "[routing]\nsampling = \"exact\"\n", "exact-routing", {});
  CHECK(exact.routing.synthetic.sampling == workloads::RoutingSampling::exact);
  const auto poisson =
      experiments::load_config_text(k_model + "[routing]\nsampling = \"poisson\"\n", "poisson-routing", {});
  CHECK(poisson.routing.synthetic.sampling == workloads::RoutingSampling::poisson);
}
