// SPDX-License-Identifier: Apache-2.0
// GRACE-MoE in a whole run: its locality-tiered routing over its grouped and replicated placement sends
// fewer bytes between nodes than the token-balancing baselines, and the replicas it places take memory:
// the KV cache of exactly the GPUs that hold them shrinks by their weights.
#include <catch2/catch.hpp>

#include "experiments/assembly/build_simulation.hpp"
#include "experiments/assembly/experiment_config.hpp"
#include "models/layer_work.hpp"
#include "sim/memory_plan.hpp"

using namespace epsim;

namespace {
const std::string k_config = std::string(EPSIM_TEST_DATA_DIR) + "/grace_scenario.toml";
serving::SimulationResult run(const std::string& placement, const std::string& routing) {
  const auto cfg = experiments::load_config(
      k_config, {"policy.placement=\"" + placement + "\"", "policy.routing=\"" + routing + "\""});
  return serving::Simulator(experiments::build_simulation(cfg, experiments::profile_pool_windows(cfg))).run();
}
}  // namespace

TEST_CASE("GRACE routing over GRACE's placement cuts inter-node traffic against linear and EPLB", "[slow]") {
  const auto linear = run("linear", "even");
  const auto eplb = run("eplb", "even");
  const auto grace = run("grace", "grace");
  for (const auto* r : {&linear, &eplb, &grace}) {
    REQUIRE(r->summary.requests_finished == 100);
  }
  INFO("inter-node GB: linear " << linear.summary.inter_node_gb << ", eplb " << eplb.summary.inter_node_gb << ", grace "
                                << grace.summary.inter_node_gb);
  REQUIRE(grace.summary.inter_node_gb < linear.summary.inter_node_gb);
  REQUIRE(grace.summary.inter_node_gb < eplb.summary.inter_node_gb);
  REQUIRE(grace.summary.comm_fraction < linear.summary.comm_fraction);
  // The price, as the paper's Figure 5 shows it: a less even load.
  REQUIRE(grace.figure("gpu_load_std_tokens") > eplb.figure("gpu_load_std_tokens"));
}

TEST_CASE("GRACE's replicas take memory: only the GPUs that hold them lose KV-cache blocks") {
  const auto cfg = experiments::load_config(k_config, {"policy.placement=\"grace\""});
  const serving::SimulationParts p = experiments::build_simulation(cfg, experiments::profile_pool_windows(cfg));
  REQUIRE(p.pools.size() == 1);
  const serving::PoolParts& pool = p.pools[0];
  REQUIRE(pool.kv_blocks_by_rank.size() == 8);
  const auto filled = [&](int g) {
    double copies = 0.0;
    for (const auto& layer : pool.placement.layers) {
      for (int s = g * layer.slots_per_gpu; s < (g + 1) * layer.slots_per_gpu; ++s) {
        copies += layer.phy2log[static_cast<std::size_t>(s)] >= 0 ? 1.0 : 0.0;
      }
    }
    return copies;
  };
  // Each rank's blocks by hand: memory x utilisation - non-expert weights - its expert copies - reserve.
  const double gib = 1024.0 * 1024.0 * 1024.0;
  const double non_expert = serving::plan_memory_for_experts(cfg.model, cfg.gpu, 0.0, cfg.serving.scheduler).kv_gib;
  const double block_bytes = serving::plan_memory(cfg.model, cfg.gpu, 9, cfg.serving.scheduler).kv_bytes_per_token *
                             static_cast<double>(cfg.serving.scheduler.kv_block_tokens);
  std::int64_t fewest = pool.kv_blocks_by_rank[0];
  std::int64_t most = fewest;
  for (int g = 0; g < 8; ++g) {
    const double kv_gib = non_expert - filled(g) * models::expert_weight_bytes(cfg.model) / gib;
    REQUIRE(pool.kv_blocks_by_rank[static_cast<std::size_t>(g)] ==
            static_cast<std::int64_t>(std::floor(kv_gib * gib / block_bytes)));
    fewest = std::min(fewest, pool.kv_blocks_by_rank[static_cast<std::size_t>(g)]);
    most = std::max(most, pool.kv_blocks_by_rank[static_cast<std::size_t>(g)]);
  }
  REQUIRE(fewest < most);  // some GPUs hold replicas, some do not
  // Linear leaves the redundant slots empty: every GPU holds 8 experts x 16 layers, its spare slot's memory
  // goes to the KV cache.
  const auto lin_cfg = experiments::load_config(k_config, {});
  const auto lin = experiments::build_simulation(lin_cfg, experiments::profile_pool_windows(lin_cfg));
  const double lin_kv_gib = non_expert - 8.0 * 16.0 * models::expert_weight_bytes(cfg.model) / gib;
  REQUIRE(lin.pools.at(0).kv_blocks_by_rank ==
          std::vector<std::int64_t>(8, static_cast<std::int64_t>(std::floor(lin_kv_gib * gib / block_bytes))));
  REQUIRE(lin.pools[0].kv_blocks_by_rank[0] >
          lin.pools[0].kv_blocks_per_gpu);  // the uniform plan reserves the spare slot
}
