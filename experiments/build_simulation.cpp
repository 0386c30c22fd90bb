#include "experiments/build_simulation.hpp"

#include <algorithm>
#include <limits>
#include <optional>

#include "experiments/builders.hpp"
#include "models/layer_work.hpp"
#include "policies/placement_policy.hpp"
#include "policies/routing_policy.hpp"
#include "sim/serving/handoff_router.hpp"
#include "sim/serving/memory_plan.hpp"
#include "workloads/synthetic_router.hpp"
#include "workloads/trace_replay.hpp"

namespace epsim::experiments {
namespace {

// With no rebalancing, slots the placement leaves empty stay empty: only filled slots take memory, so
// ranks whose GPUs got replicas (GRACE) have less KV cache than the others. Empty: every rank alike.
std::vector<std::int64_t> kv_blocks_by_rank(const ExperimentConfig& cfg, const policies::Placement& placement) {
  bool empty_slots = false;
  for (const auto& layer : placement.layers) {
    empty_slots = empty_slots || std::find(layer.phy2log.begin(), layer.phy2log.end(), -1) != layer.phy2log.end();
  }
  std::vector<std::int64_t> out;
  if (!empty_slots || cfg.policy.rebalance.trigger) {
    return out;
  }
  const int tp = cfg.serving.attention_tp;
  for (int rank = 0; rank < cfg.ep_size / tp; ++rank) {
    std::int64_t blocks = std::numeric_limits<std::int64_t>::max();
    for (int g = rank * tp; g < (rank + 1) * tp; ++g) {
      double copies = 0.0;
      for (const auto& layer : placement.layers) {
        const auto first = layer.phy2log.begin() + static_cast<std::ptrdiff_t>(g) * layer.slots_per_gpu;
        copies += static_cast<double>(std::count_if(first, first + layer.slots_per_gpu, [](int e) { return e >= 0; }));
      }
      blocks = std::min(
          blocks, serving::plan_memory_for_experts(cfg.model, cfg.gpu, copies, cfg.serving.scheduler, tp).kv_blocks);
    }
    out.push_back(blocks);
  }
  return out;
}

// The per-group trigger maker: each group's trigger from its pool's placed-group input (`prefill_in`
// for the prefill groups when the prefill pool has its own EP size), its own GPUs' curves on request,
// and the model.
std::function<std::unique_ptr<policies::RebalanceTrigger>(int)> trigger_maker(
    const ExperimentConfig& cfg, const hardware::CostModel& cost, const policies::PlacementInput& in,
    const std::optional<policies::PlacementInput>& prefill_in) {
  const auto context = [&](const policies::PlacementInput& input) {
    auto ctx = std::make_shared<policies::TriggerContext>();
    ctx->group = input;
    ctx->model_name = cfg.model.name;
    ctx->curves_of_group = [cfg, &cost](int group) { return make_group_curves(cfg, cost, group); };
    return ctx;
  };
  std::shared_ptr<policies::TriggerContext> decode = context(in);
  std::shared_ptr<policies::TriggerContext> prefill = prefill_in ? context(*prefill_in) : decode;
  return [decode, prefill, prefill_groups = cfg.disaggregation.prefill_groups, factory = cfg.policy.rebalance.trigger](
             int group) { return factory->make(group < prefill_groups ? *prefill : *decode, group); };
}

}  // namespace

serving::SimulationParts build_simulation(const ExperimentConfig& cfg) {
  const std::shared_ptr<const hardware::NetworkGraph> network = make_network(cfg);
  std::unique_ptr<hardware::CostModel> cost = make_cost_model(cfg);
  const policies::PolicyNeeds& needs = cfg.policy.needs;
  serving::SimulationParts p{.model = cfg.model, .cost = nullptr, .topology = network->port_view()};
  const policies::PlacementInput in = make_placement_input(cfg, *cost, p.topology, needs);
  p.network = network_in_use(cfg) ? network : nullptr;
  p.collectives = cfg.collectives;
  p.comm = cfg.comm;
  p.comm.overlap_compute_factor = hardware::overlap_compute_factor(cfg.comm, cfg.gpu.sm_count);
  if (cfg.prefill_comm || cfg.disaggregation.prefill_gpu) {
    // The prefill pool's own settings on its own GPUs.
    p.prefill_comm = cfg.prefill_comm.value_or(cfg.comm);
    p.prefill_comm->overlap_compute_factor = hardware::overlap_compute_factor(
        *p.prefill_comm, cfg.disaggregation.prefill_gpu ? cfg.disaggregation.prefill_gpu->sm_count : cfg.gpu.sm_count);
  }
  p.kv_blocks_per_gpu =
      serving::plan_memory(cfg.model, cfg.gpu, cfg.slots_per_gpu(), cfg.serving.scheduler, cfg.serving.attention_tp)
          .kv_blocks;
  p.prefill_groups = cfg.disaggregation.prefill_groups;
  // A prefill pool of its own EP size gets its own placement, made for its first group (its GPUs,
  // curves and routing); of the decode pool's size it shares the decode pool's, as it always did.
  const bool own_prefill_size = !cfg.pools().uniform();
  p.prefill_ep_size = own_prefill_size ? cfg.disaggregation.prefill_ep_size : 0;
  p.prefill_kv_blocks_per_gpu =
      cfg.disaggregation.prefill_gpu || own_prefill_size
          ? serving::plan_memory(cfg.model, cfg.disaggregation.prefill_gpu.value_or(cfg.gpu),
                                 cfg.prefill_slots_per_gpu(), cfg.serving.scheduler, cfg.serving.attention_tp)
                .kv_blocks
          : 0;
  p.kv_bytes_per_token = static_cast<double>(cfg.model.num_layers) * models::kv_bytes_per_token_layer(cfg.model);
  if (p.prefill_groups > 0) {
    core::ParamTable none(std::string("disaggregation.handoff"));
    p.handoff_router = serving::handoff_registry().create(cfg.disaggregation.handoff, none);
  }
  p.placement = policies::make_placement(cfg.policy, cfg.source)->place(in);
  p.placement_curves = in.curves;
  p.placement_curves_group = placed_group(cfg);
  std::optional<policies::PlacementInput> prefill_in;
  if (own_prefill_size) {
    prefill_in = make_placement_input(cfg, *cost, p.topology, needs, PlacedPool::prefill);
    p.prefill_placement = policies::make_placement(cfg.policy, cfg.source)->place(*prefill_in);
  }
  p.kv_blocks_by_rank = kv_blocks_by_rank(cfg, p.placement);
  if (cfg.policy.rebalance.trigger) {
    p.make_rebalance = trigger_maker(cfg, *cost, in, prefill_in);
    p.forecast_work = needs.predictions;
    p.migration = {cfg.policy.rebalance.migration, cfg.policy.rebalance.migration_max_bytes_per_step,
                   models::expert_weight_bytes(cfg.model)};
  }
  p.cost = std::move(cost);
  p.make_routing = [policy = cfg.policy, source = cfg.source] { return policies::make_routing(policy, source); };
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
