#include "experiments/build_simulation.hpp"

#include <toml++/toml.h>

#include "hardware/roofline.hpp"
#include "models/layer_work.hpp"
#include "policies/placement_policy.hpp"
#include "policies/registry.hpp"
#include "policies/routing_policy.hpp"
#include "sim/serving/memory_plan.hpp"
#include "workloads/synthetic_router.hpp"

namespace epsim::experiments {

serving::SimulationParts build_simulation(const ExperimentConfig& cfg) {
  const core::RandomStreams streams(cfg.seed);
  auto network = std::make_shared<const hardware::NetworkGraph>(cfg.cluster);
  auto cost =
      std::make_unique<hardware::RooflineCostModel>(cfg.gpu, resolved_speed_factors(cfg), cfg.variability, streams);
  const int prefill_gpus = cfg.disaggregation.prefill_groups * cfg.ep_size;
  if (cfg.disaggregation.prefill_gpu) {
    cost->set_gpu_model(0, prefill_gpus, *cfg.disaggregation.prefill_gpu);
  }
  serving::SimulationParts p{
      .model = cfg.model,
      .cost = std::move(cost),
      .topology = network->port_view(),
      // Disaggregated KV transfers need the graph even when collectives use the port model.
      .network = cfg.collective_model == "ports" && cfg.disaggregation.prefill_groups == 0 ? nullptr : network,
      .graph_collectives_max_gpus = cfg.collective_model == "graph"   ? (1 << 30)
                                    : cfg.collective_model == "ports" ? 0
                                                                      : cfg.graph_max_gpus,
      .kv_blocks_per_gpu =
          serving::plan_memory(cfg.model, cfg.gpu, cfg.slots_per_gpu(), cfg.serving.scheduler, cfg.serving.attention_tp)
              .kv_blocks,
      .prefill_groups = cfg.disaggregation.prefill_groups,
      .prefill_kv_blocks_per_gpu =
          cfg.disaggregation.prefill_gpu
              ? serving::plan_memory(cfg.model, *cfg.disaggregation.prefill_gpu, cfg.slots_per_gpu(),
                                     cfg.serving.scheduler, cfg.serving.attention_tp)
                    .kv_blocks
              : 0,
      .kv_bytes_per_token = static_cast<double>(cfg.model.num_layers) * models::kv_bytes_per_token_layer(cfg.model),
      .placement = {},
      .make_routing = {},
      .routing_source = {},
      .workload = cfg.workload,
      .serving = cfg.serving,
      .seed = cfg.seed,
  };
  const hardware::Topology group = serving::group_topology(p.topology, cfg.ep_size);
  policies::PlacementInput in;
  in.num_layers = static_cast<int>(cfg.model.num_moe_layers());
  in.num_experts = static_cast<int>(cfg.model.routed_experts);
  in.num_gpus = cfg.ep_size;
  in.num_nodes = group.nodes();
  in.slots_per_gpu = cfg.slots_per_gpu();
  core::ParamTable placement_opts({core::ParamLayer{cfg.policy.placement_options.get(), cfg.source}},
                                  "policy.placement_options");
  p.placement = policies::placement_registry().create(cfg.policy.placement, placement_opts)->place(in);

  const std::string routing_name = cfg.policy.routing;
  const std::shared_ptr<const toml::table> routing_opts = cfg.policy.routing_options;
  const std::string source = cfg.source;
  p.make_routing = [routing_name, routing_opts, source] {
    core::ParamTable t({core::ParamLayer{routing_opts.get(), source}}, "policy.routing_options");
    return policies::routing_registry().create(routing_name, t);
  };
  const auto layers = static_cast<int>(cfg.model.num_moe_layers());
  const auto experts = static_cast<int>(cfg.model.routed_experts);
  const auto top_k = static_cast<int>(cfg.model.top_k);
  if (cfg.routing_source == "trace") {
    p.routing_source = std::make_unique<workloads::TraceRoutingSource>(cfg.trace, layers, experts, top_k, streams);
  } else {
    p.routing_source = std::make_unique<workloads::SyntheticRouter>(cfg.router, layers, experts, top_k, streams);
  }
  return p;
}

}  // namespace epsim::experiments
