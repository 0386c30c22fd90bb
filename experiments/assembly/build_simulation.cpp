// SPDX-License-Identifier: Apache-2.0
#include "experiments/assembly/build_simulation.hpp"

#include <algorithm>
#include <limits>
#include <optional>

#include "experiments/assembly/builders.hpp"
#include "models/layer_work.hpp"
#include "policies/placement_policy.hpp"
#include "policies/policy_config.hpp"
#include "policies/routing_policy.hpp"
#include "sim/handoff_router.hpp"
#include "sim/memory_plan.hpp"
#include "workloads/synthetic_router.hpp"
#include "workloads/trace_replay.hpp"

namespace epsim::experiments {
namespace {

// With no rebalancing, slots the placement leaves empty stay empty: only filled slots take memory, so
// ranks whose GPUs got replicas (GRACE) have less KV cache than the others. Empty: every rank alike.
std::vector<std::int64_t> kv_blocks_by_rank(const ExperimentConfig& cfg, const serving::PoolSpec& pool,
                                            const policies::Placement& placement) {
  bool empty_slots = false;
  for (const auto& layer : placement.layers) {
    empty_slots = empty_slots || std::find(layer.phy2log.begin(), layer.phy2log.end(), -1) != layer.phy2log.end();
  }
  std::vector<std::int64_t> out;
  if (!empty_slots || pool.policy.rebalance.trigger) {
    return out;
  }
  const int tp = pool.attention_tp;
  for (int rank = 0; rank < pool.ranks_per_group(); ++rank) {
    std::int64_t blocks = std::numeric_limits<std::int64_t>::max();
    for (int g = rank * tp; g < (rank + 1) * tp; ++g) {
      double copies = 0.0;
      for (const auto& layer : placement.layers) {
        const auto first = layer.phy2log.begin() + static_cast<std::ptrdiff_t>(g) * layer.slots_per_gpu;
        copies += static_cast<double>(std::count_if(first, first + layer.slots_per_gpu, [](int e) { return e >= 0; }));
      }
      blocks = std::min(
          blocks,
          serving::plan_memory_for_experts(cfg.model, cfg.gpu_of(pool), copies, cfg.serving.scheduler, tp).kv_blocks);
    }
    out.push_back(blocks);
  }
  return out;
}

// The pool's per-group trigger maker: each group's trigger from the pool's placed-group input, its own
// GPUs' curves on request, and the model.
std::function<std::unique_ptr<policies::RebalanceTrigger>(int)> trigger_maker(const ExperimentConfig& cfg,
                                                                              const hardware::CostModel& cost,
                                                                              const serving::PoolSpec& pool,
                                                                              const policies::PlacementInput& in) {
  auto ctx = std::make_shared<policies::TriggerContext>();
  ctx->group = in;
  ctx->model_name = cfg.model.name;
  ctx->curves_of_group = [cfg, &cost](int group) { return make_group_curves(cfg, cost, group); };
  if (pool.policy.placement == "eplb") {
    ctx->run_eplb = [policy = pool.policy, source = cfg.source] { return policies::make_placement(policy, source); };
  }
  return [ctx, factory = pool.policy.rebalance.trigger](int group) { return factory->make(*ctx, group); };
}

// One pool's parts: its placement (made for its first group from what its policies declared they need),
// KV budget, routing, trigger and hand-off policy.
serving::PoolParts build_pool(const ExperimentConfig& cfg, const hardware::CostModel& cost,
                              const hardware::Topology& ports, std::size_t index, const LoadWindow* window,
                              policies::PlacementInput& input) {
  const serving::PoolSpec& spec = cfg.pools[index];
  serving::PoolParts pool;
  pool.spec = spec;
  pool.spec.comm.overlap_compute_factor = hardware::overlap_compute_factor(spec.comm, cfg.gpu_of(spec).sm_count);
  input = make_placement_input(cfg, cost, ports, index, window);
  pool.placement = policies::make_placement(spec.policy, cfg.source)->place(input);
  const serving::MemoryPlan memory =
      serving::plan_memory(cfg.model, cfg.gpu_of(spec), spec.slots_per_gpu(cfg.model.routed_experts),
                           cfg.serving.scheduler, spec.attention_tp);
  pool.kv_blocks_per_gpu = memory.kv_blocks;
  pool.state_blocks_per_request = memory.state_blocks_per_request;
  pool.kv_blocks_by_rank = kv_blocks_by_rank(cfg, spec, pool.placement);
  if (spec.policy.rebalance.trigger) {
    pool.make_rebalance = trigger_maker(cfg, cost, spec, input);
  }
  pool.make_routing = [policy = spec.policy, source = cfg.source] { return policies::make_routing(policy, source); };
  if (!spec.handoff_to.empty()) {
    core::ParamTable none(std::string("handoff"));
    pool.handoff_router = serving::handoff_registry().create(spec.handoff, none);
  }
  return pool;
}

}  // namespace

serving::SimulationParts build_simulation(const ExperimentConfig& cfg, const PoolWindows& windows) {
  const std::shared_ptr<const hardware::NetworkGraph> network = make_network(cfg);
  std::unique_ptr<hardware::CostModel> cost = make_cost_model(cfg);
  serving::SimulationParts p{.model = cfg.model, .cost = nullptr, .topology = network->port_view()};
  p.network = network_in_use(cfg) ? network : nullptr;
  p.collectives = cfg.collectives;
  const std::size_t primary = primary_pool_index(cfg);
  bool forecast = false;
  for (std::size_t i = 0; i < cfg.pools.size(); ++i) {
    policies::PlacementInput in;
    const LoadWindow* window = nullptr;
    if (i < windows.of_pool.size()) {
      if (const std::optional<LoadWindow>& w = windows.of_pool[i]; w.has_value()) {
        window = &*w;
      }
    }
    p.pools.push_back(build_pool(cfg, *cost, p.topology, i, window, in));
    forecast = forecast || (cfg.pools[i].policy.rebalance.trigger && cfg.pools[i].policy.needs.predictions);
    if (i == primary) {
      p.placement_curves = in.cost_curves_ptr();
      p.placement_curves_group = placed_group(cfg, i);
    }
  }
  p.kv_bytes_per_token = models::growing_kv_bytes_per_token(cfg.model);
  p.state_bytes_per_request = models::state_bytes_per_request(cfg.model);
  p.forecast_work = forecast;
  p.migration = {cfg.policy.rebalance.migration, cfg.policy.rebalance.migration_max_bytes_per_step,
                 models::expert_weight_bytes(cfg.model), cfg.policy.rebalance.migration_layer_overhead_ns,
                 cfg.policy.rebalance.migration_layers_per_chunk};
  p.cost = std::move(cost);
  const auto layers = static_cast<int>(cfg.model.num_moe_layers());
  const auto experts = static_cast<int>(cfg.model.routed_experts);
  const auto top_k = static_cast<int>(cfg.model.top_k);
  const core::RandomStreams streams(cfg.seed_of(SeedFamily::workload));
  if (cfg.routing.source == workloads::RoutingSourceKind::trace) {
    p.routing_source =
        std::make_unique<workloads::TraceRoutingSource>(cfg.routing.trace, layers, experts, top_k, streams);
  } else {
    p.routing_source =
        std::make_unique<workloads::SyntheticRouter>(cfg.routing.synthetic, layers, experts, top_k, streams);
  }
  p.workload = cfg.workload;
  p.serving = cfg.serving;
  p.seed = cfg.seed_of(SeedFamily::workload);
  return p;
}

}  // namespace epsim::experiments
