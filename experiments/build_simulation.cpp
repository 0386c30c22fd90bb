#include "experiments/build_simulation.hpp"

#include <toml++/toml.h>

#include "hardware/roofline.hpp"
#include "models/layer_work.hpp"
#include "policies/placement_policy.hpp"
#include "policies/rebalance_trigger.hpp"
#include "policies/registry.hpp"
#include "policies/routing_policy.hpp"
#include "sim/serving/memory_plan.hpp"
#include "workloads/synthetic_router.hpp"
#include "workloads/trace_io.hpp"

namespace epsim::experiments {

std::vector<double> profile_load(const ExperimentConfig& cfg) {
  const auto layers = static_cast<int>(cfg.model.num_moe_layers());
  const auto experts = static_cast<int>(cfg.model.routed_experts);
  std::vector<double> load(static_cast<std::size_t>(layers) * static_cast<std::size_t>(experts), 0.0);
  if (cfg.routing_source == "trace") {
    workloads::TraceReader reader(cfg.trace.file);
    trace::Step s;
    for (std::int64_t i = 0; i < cfg.policy.load_window_steps && reader.next(s); ++i) {
      for (int l = 0; l < layers; ++l) {
        for (int e = 0; e < experts; ++e) {
          load[static_cast<std::size_t>(l) * static_cast<std::size_t>(experts) + static_cast<std::size_t>(e)] +=
              s.layers(l).expert_tokens(e);
        }
      }
    }
    return load;
  }
  // A router of its own: the same hot sets and topics as the run's, without touching the run's draws.
  workloads::SyntheticRouter router(cfg.router, layers, experts, static_cast<int>(cfg.model.top_k),
                                    core::RandomStreams(cfg.seed));
  std::vector<std::int32_t> counts(static_cast<std::size_t>(experts));
  const std::int64_t tokens = cfg.policy.load_window_tokens;
  for (std::int64_t i = 0; i < cfg.policy.load_window_steps; ++i) {
    router.begin_step(workloads::StepContext{0, tokens, 0, tokens, {}});
    for (int l = 0; l < layers; ++l) {
      router.sample(l, tokens, counts);
      for (int e = 0; e < experts; ++e) {
        load[static_cast<std::size_t>(l) * static_cast<std::size_t>(experts) + static_cast<std::size_t>(e)] +=
            counts[static_cast<std::size_t>(e)];
      }
    }
  }
  return load;
}

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
      // KV and expert-weight transfers need the graph even when collectives use the port model.
      .network =
          cfg.collective_model == "ports" && cfg.disaggregation.prefill_groups == 0 && cfg.policy.rebalance == "none"
              ? nullptr
              : network,
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
      .make_rebalance = {},
      .rebalance_stop_the_world = cfg.policy.rebalance_mode == "stop_the_world",
      .expert_bytes = models::expert_weight_bytes(cfg.model),
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
  const auto placement = policies::placement_registry().create(cfg.policy.placement, placement_opts);
  in.num_groups = static_cast<int>(cfg.model.expert_groups);
  if (placement->needs_load()) {
    in.expert_load = profile_load(cfg);
  }
  p.placement = placement->place(in);
  if (cfg.policy.rebalance == "periodic") {
    const std::int64_t window = cfg.policy.rebalance_window_steps;
    const std::int64_t interval = cfg.policy.rebalance_interval_steps;
    p.make_rebalance = [in, window, interval] {
      return std::make_unique<policies::PeriodicEplbTrigger>(in, window, interval);
    };
  }

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
