// SPDX-License-Identifier: Apache-2.0
// The SLO search on a toy system of known capacity (one request at a time, deterministic service D:
// no rate above 1 / D is sustainable; with Poisson arrivals it is an M/D/1 queue whose waiting-time
// distribution is known in closed form), and serving under KV-memory pressure end to end.
#include <catch2/catch.hpp>
#include <cmath>

#include "experiments/assembly/build_simulation.hpp"
#include "experiments/assembly/experiment_config.hpp"
#include "experiments/studies/slo_search.hpp"

using namespace epsim;

namespace {

constexpr const char* k_toy = R"(
[run]
seed = 3
[model]
name = "tiny"
hidden_size = 1024
num_layers = 1
moe_intermediate_size = 512
routed_experts = 4
top_k = 1
num_heads = 8
vocab_size = 1000
[gpu]
bf16_tflops = 100.0
hbm_gbps = 1000.0
memory_gib = 80.0
[cluster]
nodes = 1
gpus_per_node = 1
[workload]
rate_rps = 1000.0
num_requests = 1500
[workload.prompt_tokens]
value = 1
[workload.output_tokens]
value = 1
[scheduler]
max_batch_tokens = 1
max_running_requests = 1
step_overhead_us = 20.0
)";

// M/D/1 (Erlang): P(W <= t) = (1 - rho) sum_{k=0}^{floor(t / D)} [lambda (k D - t)]^k / k! e^{-lambda (k D - t)}.
double md1_wait_cdf(double lambda, double d, double t) {
  const double rho = lambda * d;
  double sum = 0.0;
  for (int k = 0; k * d <= t; ++k) {
    const double x = lambda * (k * d - t);
    sum += std::pow(x, k) / std::tgamma(k + 1.0) * std::exp(-x);
  }
  return (1.0 - rho) * sum;
}

}  // namespace

TEST_CASE("the M/D/1 waiting-time formula against hand values") {
  // No waiting allowed: P(W = 0) = 1 - rho.
  REQUIRE(md1_wait_cdf(0.5, 1.0, 0.0) == Approx(0.5));
  // t = D, rho = 0.5: 0.5 * (e^{0.5} + (-0.5)^1 e^{0}) ... k = 0: e^{0.5}; k = 1: x = 0, 0^1 = 0.
  REQUIRE(md1_wait_cdf(0.5, 1.0, 1.0) == Approx(0.5 * std::exp(0.5)));
}

TEST_CASE("steady-state SLO search finds the M/D/1 rate at which 90 % of TTFTs meet the target", "[slow]") {
  auto single = experiments::load_config_text(k_toy, "toy", {"workload.num_requests=1"});
  serving::Simulator one(experiments::build_simulation(single, experiments::profile_pool_windows(single)));
  const double d_s = one.run().summary.e2e_ms.mean / 1e3;  // service time D (a request is one step)
  // TTFT = wait + D <= 5 D. Solve P(W <= 4 D) = 0.9 for lambda by bisection on the closed form.
  double lo = 0.0;
  double hi = 1.0 / d_s;
  for (int i = 0; i < 100; ++i) {
    const double mid = (lo + hi) / 2.0;
    (md1_wait_cdf(mid, d_s, 4.0 * d_s) >= 0.9 ? lo : hi) = mid;
  }
  const double expected_rps = lo;
  // rho* = 0.7577 (a Lindley-recursion simulation of 2e6 M/D/1 customers in Python agrees: 89.99 %).
  REQUIRE(expected_rps * d_s == Approx(0.7577).epsilon(0.001));

  auto cfg = experiments::load_config_text(k_toy, "toy", {"slo.ttft_ms=" + std::to_string(5e3 * d_s)});
  experiments::SloSearchOptions o;
  o.target = 0.9;
  o.tolerance = 0.01;
  o.measured_requests = 40000;
  o.replications = 2;
  const auto res = experiments::search_max_rate(cfg, o);
  INFO("steady-state answer " << res.max_rate_rps << " req/s, M/D/1 " << expected_rps << " req/s");
  REQUIRE(res.bracketed);
  REQUIRE(res.max_rate_rps == Approx(expected_rps).epsilon(0.04));
  REQUIRE(res.max_rate.n == 2);
  REQUIRE(res.warnings.empty());
  // Each probe measured the requested window (doubled while a passing probe's queue had not settled):
  // warm-up and cool-down excluded.
  for (const auto& p : res.probes) {
    REQUIRE(p.summary.requests == Approx(40000 * p.window_scale).epsilon(0.03));
  }

  // The same search over the config's burst of 1500 requests is told that it measures a drain.
  experiments::SloSearchOptions burst = o;
  burst.steady_state = false;
  burst.replications = 1;
  const auto drained = experiments::search_max_rate(cfg, burst);
  REQUIRE_THAT(drained.warnings.at(0), Catch::Contains("burst drains"));
}

TEST_CASE("the SLO search probes a common rate grid and warns when the measured window is small") {
  const auto single_cfg = experiments::load_config_text(k_toy, "toy", {"workload.num_requests=1"});
  serving::Simulator one(experiments::build_simulation(single_cfg, experiments::profile_pool_windows(single_cfg)));
  const double d_ms = one.run().summary.e2e_ms.mean;
  const double capacity_rps = 1e3 / d_ms;
  auto cfg = experiments::load_config_text(k_toy, "toy", {"slo.ttft_ms=" + std::to_string(5.0 * d_ms)});
  experiments::SloSearchOptions o;
  o.rates = {0.25 * capacity_rps, 0.5 * capacity_rps, 4.0 * capacity_rps};
  o.measured_requests = 100;
  const auto res = experiments::search_max_rate(cfg, o);
  // The grid, then the rate before the first miss again on a window 3x as long (sorted by rate).
  REQUIRE(res.probes.size() == 4);
  REQUIRE(res.probes[3].summary.slo_attainment < 0.5);  // 4x the capacity: the queue grows without bound
  REQUIRE(res.probes[1].summary.slo_attainment >= 0.9);
  REQUIRE(res.probes[2].confirmation);
  REQUIRE(res.probes[2].rate_rps == 0.5 * capacity_rps);
  REQUIRE(res.probes[2].window_scale == 3.0 * res.probes[1].window_scale);
  REQUIRE(res.probes[2].summary.slo_attainment >= 0.9);
  // The answer is the highest grid rate that held on the long window, not an interpolation past it;
  // the bracket's high end is the first rate that missed.
  REQUIRE(res.max_rate_rps == 0.5 * capacity_rps);
  REQUIRE(res.replications.at(0).bracket_high_rps == 4.0 * capacity_rps);
  REQUIRE(res.bracketed);
  REQUIRE(!res.warnings.empty());  // 100 measured requests are too few to trust
  o.rates = {2.0, 1.0};
  REQUIRE_THROWS_WITH(experiments::search_max_rate(cfg, o), Catch::Contains("ascending"));
}

TEST_CASE("SLO search on a toy system with a known capacity") {
  auto single = experiments::load_config_text(k_toy, "toy", {"workload.num_requests=1"});
  serving::Simulator one(experiments::build_simulation(single, experiments::profile_pool_windows(single)));
  const auto r1 = one.run();
  const double d_ms = r1.summary.e2e_ms.mean;  // the deterministic service time D
  REQUIRE(d_ms > 0.0);
  // Generous TTFT target: 20 x D. Capacity is 1 / D requests per ms.
  auto cfg = experiments::load_config_text(k_toy, "toy", {"slo.ttft_ms=" + std::to_string(20.0 * d_ms)});
  experiments::SloSearchOptions o;
  o.target = 0.9;
  o.tolerance = 0.01;
  o.measured_requests = 1500;
  const auto res = experiments::search_max_rate(cfg, o);
  REQUIRE(res.bracketed);
  const double capacity_rps = 1e3 / d_ms;
  REQUIRE(res.max_rate_rps < capacity_rps);
  REQUIRE(res.max_rate_rps > 0.5 * capacity_rps);
  // Same seed per probe: on windows of one length the arrival gaps scale as 1 / rate, so attainment
  // never rises with the rate.
  for (std::size_t i = 1; i < res.probes.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (res.probes[j].window_scale == res.probes[i].window_scale) {
        INFO("rates " << res.probes[j].rate_rps << " and " << res.probes[i].rate_rps);
        REQUIRE(res.probes[i].summary.slo_attainment <= res.probes[j].summary.slo_attainment);
      }
    }
  }
  // The answer held on a long window and a probe within the tolerance above it did not: the bracket.
  const auto& rep = res.replications.at(0);
  REQUIRE(rep.confirmation.has_value());
  REQUIRE(rep.confirmation->rate_rps == res.max_rate_rps);
  REQUIRE(rep.confirmation->summary.slo_attainment >= 0.9);
  // (A short probe above the answer may have passed: a long one then refuted it and the search
  // stepped down.)
  const auto above = std::find_if(res.probes.begin(), res.probes.end(), [&](const auto& p) {
    return p.rate_rps > res.max_rate_rps && p.summary.slo_attainment < 0.9;
  });
  REQUIRE(above != res.probes.end());
  REQUIRE(above->rate_rps == rep.bracket_high_rps);
  REQUIRE(rep.bracket_high_rps <= res.max_rate_rps * 1.0101);
}

TEST_CASE("a probe's window is the search's: the config's time limit does not cut it short") {
  // Low rates need long windows (1,500 measured requests at half the capacity take ~0.4 s here); a
  // config stopped at a fraction of that used to fail every probe, and the search answered 0.
  auto single = experiments::load_config_text(k_toy, "toy", {"workload.num_requests=1"});
  serving::Simulator one(experiments::build_simulation(single, experiments::profile_pool_windows(single)));
  const double d_ms = one.run().summary.e2e_ms.mean;
  const double capacity_rps = 1e3 / d_ms;
  const std::string ttft = "slo.ttft_ms=" + std::to_string(20.0 * d_ms);
  experiments::SloSearchOptions o;
  o.tolerance = 0.05;
  o.measured_requests = 1500;
  const double window_s = 1500.0 / (0.5 * capacity_rps) / 0.7;
  const std::string cap = "run.max_sim_time_s=" + std::to_string(0.1 * window_s);
  const auto free = experiments::search_max_rate(experiments::load_config_text(k_toy, "toy", {ttft}), o);
  const auto capped = experiments::search_max_rate(experiments::load_config_text(k_toy, "toy", {ttft, cap}), o);
  REQUIRE(capped.max_rate_rps > 0.5 * capacity_rps);
  REQUIRE(capped.max_rate_rps < capacity_rps);
  REQUIRE(capped.max_rate_rps == free.max_rate_rps);
  REQUIRE(capped.probes.size() == free.probes.size());
}

TEST_CASE("a cluster short of KV memory preempts and still finishes every request") {
  // Mixtral-8x7B on 4 H100 with 32 % of memory usable: 25 GiB of weights and reserve leave ~0.6 GiB of
  // KV cache per GPU (~4,900 tokens). Long answers at a high rate force decode growth past the cache.
  const std::string path = std::string(EPSIM_TEST_DATA_DIR) + "/small.toml";
  auto cfg = experiments::load_config(
      path, {"scheduler.gpu_memory_utilization=0.32", "workload.rate_rps=40", "workload.num_requests=60",
             "workload.output_tokens.min=200", "workload.output_tokens.max=400", "scheduler.kv_watermark=0.0"});
  serving::Simulator sim(experiments::build_simulation(cfg, experiments::profile_pool_windows(cfg)));
  const auto res = sim.run();
  REQUIRE(res.summary.preemptions > 0);
  REQUIRE(res.summary.requests_finished == 60);
  std::int64_t preempted = 0;
  for (const auto& r : res.requests) {
    preempted += r.preemptions;
    REQUIRE(r.generated == r.spec.output_tokens);
  }
  REQUIRE(preempted == res.summary.preemptions);
  // Less memory than the weights is a config error.
  REQUIRE_THROWS_WITH(experiments::load_config(path, {"scheduler.gpu_memory_utilization=0.2"}),
                      Catch::Contains("scheduler.gpu_memory_utilization: no room for the KV cache"));
}

TEST_CASE("periodic rebalancing charges each moved expert's bytes, stalls only when stopping the world") {
  const std::string path = std::string(EPSIM_TEST_DATA_DIR) + "/small.toml";
  const auto run = [&](const std::string& mode) {
    const auto cfg = experiments::load_config(path, {"policy.rebalance=periodic", "policy.rebalance.interval_steps=200",
                                                     "policy.rebalance.migration=" + mode});
    serving::Simulator sim(experiments::build_simulation(cfg, experiments::profile_pool_windows(cfg)));
    return sim.run();
  };
  const auto stw = run("stop_the_world");
  REQUIRE(stw.rebalances > 0);
  REQUIRE(stw.expert_moves > 0);
  // Mixtral-8x7B expert: 3 x 4096 x 14336 BF16 weights.
  REQUIRE(stw.migration_bytes == Approx(static_cast<double>(stw.expert_moves) * 3.0 * 4096 * 14336 * 2));
  REQUIRE(stw.migration_stall_ms > 0.0);
  const auto overlapped = run("overlapped");
  REQUIRE(overlapped.expert_moves > 0);
  REQUIRE(overlapped.migration_stall_ms == 0.0);
  REQUIRE(overlapped.summary.requests_finished == 40);
  // Layer by layer never stops serving; chunks of one layer stop it once per moved layer, a step apart.
  const auto layered = run("layer_by_layer");
  REQUIRE(layered.expert_moves > 0);
  REQUIRE(layered.migration_stall_ms == 0.0);
  REQUIRE(layered.summary.requests_finished == 40);
  const auto chunked = run("chunked");
  REQUIRE(chunked.expert_moves > 0);
  REQUIRE(chunked.migration_stall_ms > 0.0);
  REQUIRE(chunked.summary.requests_finished == 40);
}
