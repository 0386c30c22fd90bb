// SPDX-License-Identifier: Apache-2.0
// DeepEP's per-token deduplication makes co-locating co-activated experts save bytes (GRACE-MoE's
// argument), which an all-to-all of token-expert pairs barely can: a pair crosses to its expert's GPU
// wherever that is, so grouping changes only which links carry it.
#include <catch2/catch.hpp>

#include "experiments/assembly/build_simulation.hpp"
#include "experiments/assembly/experiment_config.hpp"
#include "sim/simulator.hpp"

using namespace epsim;

namespace {

// Bytes moved between GPUs (inside and between nodes) over the whole run, GB.
double network_gb(const std::string& placement, const std::string& algorithm) {
  const auto cfg = experiments::load_config(
      std::string(EPSIM_TEST_DATA_DIR) + "/grace_scenario.toml",
      {"policy.placement=" + placement, "policy.routing=even", "communication.algorithm=\"" + algorithm + "\"",
       "parallel.redundant_experts=0", "routing.topic_spread=3.0", "workload.num_requests=60"});
  serving::Simulator sim(experiments::build_simulation(cfg, experiments::profile_pool_windows(cfg)));
  const auto res = sim.run();
  return res.summary.inter_node_gb + res.summary.intra_node_gb;
}

}  // namespace

TEST_CASE("per-token deduplication rewards GRACE's grouping of co-activated experts", "[slow]") {
  // OLMoE (top-8 of 64), 4 strongly distinct topics, EP8 on 2 nodes of 4 GPUs, grouping only (no
  // replicas: GRACE's "HG"); the same requests either way.
  const double nccl_linear = network_gb("linear", "nccl");
  const double nccl_grace = network_gb("grace", "nccl");
  const double deepep_linear = network_gb("linear", "deepep_normal");
  const double deepep_grace = network_gb("grace", "deepep_normal");
  const double nccl_saving = 1.0 - nccl_grace / nccl_linear;
  const double deepep_saving = 1.0 - deepep_grace / deepep_linear;
  INFO("GB: nccl linear " << nccl_linear << ", grace " << nccl_grace << "; deepep linear " << deepep_linear
                          << ", grace " << deepep_grace);
  CHECK(deepep_linear < 0.7 * nccl_linear);  // once per node / GPU, FP8 dispatch
  CHECK(deepep_saving > 0.25);               // a topic's experts on one GPU or node: a token arrives once
  CHECK(deepep_saving > 3.0 * nccl_saving);
}
