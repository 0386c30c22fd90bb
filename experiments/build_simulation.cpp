#include "experiments/build_simulation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include <toml++/toml.h>

#include "hardware/network_graph.hpp"
#include "hardware/roofline.hpp"
#include "models/layer_work.hpp"
#include "policies/affinity.hpp"
#include "policies/placement_policy.hpp"
#include "policies/rebalance_trigger.hpp"
#include "policies/registry.hpp"
#include "policies/routing_policy.hpp"
#include "sim/core/error.hpp"
#include "sim/serving/memory_plan.hpp"
#include "workloads/synthetic_router.hpp"
#include "workloads/trace_io.hpp"

namespace epsim::experiments {
namespace {

// Records the expert loads of the steps after the first `skip`, up to `keep` steps, never re-places.
class LoadRecorder final : public policies::RebalanceTrigger {
 public:
  LoadRecorder(std::shared_ptr<std::vector<double>> out, std::int64_t skip, std::int64_t keep)
      : out_(std::move(out)), skip_(skip), keep_(keep) {}
  std::optional<policies::Placement> on_step(const policies::RebalanceView& view) override {
    if (seen_++ >= skip_ && seen_ <= skip_ + keep_) {
      out_->insert(out_->end(), view.expert_tokens.begin(), view.expert_tokens.end());
    }
    return std::nullopt;
  }

 private:
  std::shared_ptr<std::vector<double>> out_;
  std::int64_t skip_;
  std::int64_t keep_;
  std::int64_t seen_ = 0;
};

// GEM's step 1: serve with the linear placement and record the routing of real steps (their real
// token counts, prefill and decode mixed as the scheduler forms them), skipping the ramp-up.
LoadWindow warmup_load(const ExperimentConfig& cfg) {
  ExperimentConfig warm = cfg;
  warm.policy.placement = "linear";
  warm.policy.placement_options = std::make_shared<const toml::table>();
  warm.policy.rebalance = "none";
  const std::int64_t skip = cfg.policy.load_window_skip_steps;
  const std::int64_t keep = cfg.policy.load_window_steps;
  serving::SimulationParts parts = build_simulation(warm);
  if (!parts.network) {  // triggers need the graph (the recorder never moves anything, but says so)
    parts.network = std::make_shared<const hardware::NetworkGraph>(cfg.cluster);
  }
  auto steps = std::make_shared<std::vector<double>>();
  // One recorder, on the group the placement is made for (the first decode group when disaggregated):
  // its steps are a consecutive sequence.
  auto made = std::make_shared<int>(0);
  const int target = cfg.disaggregation.prefill_groups;
  parts.make_rebalance = [steps, skip, keep, made, target]() -> std::unique_ptr<policies::RebalanceTrigger> {
    return (*made)++ == target ? std::make_unique<LoadRecorder>(steps, skip, keep) : nullptr;
  };
  const int groups = std::max(1, static_cast<int>(cfg.cluster.nodes * cfg.cluster.gpus_per_node / cfg.ep_size));
  parts.serving.max_steps = (skip + keep) * groups;
  serving::Simulator(std::move(parts)).run();
  const auto per_step =
      static_cast<std::size_t>(cfg.model.num_moe_layers()) * static_cast<std::size_t>(cfg.model.routed_experts);
  if (steps->size() < static_cast<std::size_t>(keep) * per_step) {
    throw core::ConfigError(cfg.source, "policy.load_window",
                            fmt::format("the warm-up run served only {} steps after its {} ramp-up steps, fewer than "
                                        "the {} of the load window: lower policy.load_window_skip_steps or "
                                        "load_window_steps, or serve more requests",
                                        steps->size() / per_step, skip, keep));
  }
  LoadWindow w;
  w.total.assign(per_step, 0.0);
  w.steps = std::move(*steps);
  for (std::size_t i = 0; i < w.steps.size(); ++i) {
    w.total[i % per_step] += w.steps[i];
  }
  return w;
}

}  // namespace

std::vector<double> profile_coactivation(const ExperimentConfig& cfg) {
  const auto layers = static_cast<int>(cfg.model.num_moe_layers());
  const auto experts = static_cast<int>(cfg.model.routed_experts);
  const auto k = static_cast<int>(cfg.model.top_k);
  const auto block = static_cast<std::size_t>(experts) * static_cast<std::size_t>(experts);
  std::vector<double> counts(static_cast<std::size_t>(layers) * block, 0.0);
  if (cfg.routing_source == "trace") {
    workloads::TraceReader reader(cfg.trace.file);
    if (!reader.header().has_token_experts()) {
      throw core::ConfigError(cfg.source, "routing.trace_file",
                              "the placement needs expert co-selection (GRACE's affinity), but the trace has no "
                              "per-token top-k expert ids (has_token_experts)");
    }
    trace::Step s;
    std::vector<int> topk(static_cast<std::size_t>(k));
    for (std::int64_t i = 0; i < cfg.policy.load_window_steps && reader.next(s); ++i) {
      for (int l = 0; l < layers; ++l) {
        const auto& ids = s.layers(l).token_experts();
        const std::span<double> layer_counts(counts.data() + static_cast<std::size_t>(l) * block, block);
        for (int t = 0; t + k <= ids.size(); t += k) {
          for (int j = 0; j < k; ++j) {
            topk[static_cast<std::size_t>(j)] = static_cast<int>(ids.Get(t + j));
          }
          policies::add_coselection(layer_counts, experts, topk);
        }
      }
    }
    return counts;
  }
  // Synthetic routing: the expected co-selections of the window's tokens under the topic structure.
  const workloads::SyntheticRouter router(cfg.router, layers, experts, k, core::RandomStreams(cfg.seed));
  const double tokens =
      static_cast<double>(cfg.policy.load_window_steps) * static_cast<double>(cfg.policy.load_window_tokens);
  for (int l = 0; l < layers; ++l) {
    const std::span<double> layer_counts(counts.data() + static_cast<std::size_t>(l) * block, block);
    router.expected_coselection(l, 0, layer_counts);
    for (double& c : layer_counts) {
      c *= tokens;
    }
  }
  return counts;
}

LoadWindow profile_load(const ExperimentConfig& cfg) {
  const auto layers = static_cast<int>(cfg.model.num_moe_layers());
  const auto experts = static_cast<int>(cfg.model.routed_experts);
  const auto per_step = static_cast<std::size_t>(layers) * static_cast<std::size_t>(experts);
  LoadWindow w;
  w.total.assign(per_step, 0.0);
  if (cfg.routing_source == "trace") {
    workloads::TraceReader reader(cfg.trace.file);
    trace::Step s;
    for (std::int64_t i = 0; i < cfg.policy.load_window_steps && reader.next(s); ++i) {
      for (int l = 0; l < layers; ++l) {
        for (int e = 0; e < experts; ++e) {
          const double n = s.layers(l).expert_tokens(e);
          w.total[static_cast<std::size_t>(l) * static_cast<std::size_t>(experts) + static_cast<std::size_t>(e)] += n;
          w.steps.push_back(n);
        }
      }
    }
    return w;
  }
  if (cfg.policy.load_window == "warmup") {
    return warmup_load(cfg);
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
        w.total[static_cast<std::size_t>(l) * static_cast<std::size_t>(experts) + static_cast<std::size_t>(e)] +=
            counts[static_cast<std::size_t>(e)];
        w.steps.push_back(counts[static_cast<std::size_t>(e)]);
      }
    }
  }
  return w;
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
      .rebalance_in_compute_phases = cfg.policy.rebalance_mode == "compute_phases",
      .migration_max_bytes_per_step = cfg.policy.migration_max_gb_per_step * 1e9,
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
  in.seed = cfg.seed;
  const bool drift = cfg.policy.rebalance == "drift";
  const bool director = cfg.policy.rebalance == "director";
  // DIRECTOR's communication model: a token's hidden state over the group's links (scale-up within a
  // node, scale-out across), in bytes per ns = GB/s.
  in.token_bytes = static_cast<double>(cfg.model.hidden_size * cfg.model.activation_bytes);
  for (int a = 0; a < cfg.ep_size; ++a) {
    for (int b = 0; b < cfg.ep_size; ++b) {
      in.link_bytes_per_ns.push_back(a / group.gpus_per_node() == b / group.gpus_per_node() ? group.intra().bw_gbps
                                                                                            : group.inter().bw_gbps);
    }
  }
  if (placement->needs_load() || drift || director) {
    LoadWindow w = profile_load(cfg);
    in.expert_load = std::move(w.total);
    in.window_load = std::move(w.steps);
    in.window_steps = static_cast<int>(in.window_load.size() / std::max<std::size_t>(1, in.expert_load.size()));
  }
  // Every group uses one placement, made for the first group that decodes (the first group when
  // co-located): its GPUs' curves and, in the warm-up, its steps.
  const int placed_group = cfg.disaggregation.prefill_groups;
  if (placement->needs_coactivation()) {
    in.coactivation = profile_coactivation(cfg);
  }
  if (placement->needs_curves() || drift || director) {
    in.curves = serving::make_cost_curves(cfg.model, *p.cost, placed_group * cfg.ep_size, cfg.ep_size, in.slots_per_gpu,
                                          cfg.policy.cost_profile, streams);
  }
  p.placement = placement->place(in);
  if (cfg.policy.rebalance == "none") {
    // Slots the placement leaves empty stay empty (nothing re-places): only filled slots take memory, so
    // GPUs that got replicas (GRACE) have less KV cache than the others.
    bool empty_slots = false;
    for (const auto& layer : p.placement.layers) {
      empty_slots = empty_slots || std::find(layer.phy2log.begin(), layer.phy2log.end(), -1) != layer.phy2log.end();
    }
    if (empty_slots) {
      const int tp = cfg.serving.attention_tp;
      for (int rank = 0; rank < cfg.ep_size / tp; ++rank) {
        std::int64_t blocks = std::numeric_limits<std::int64_t>::max();
        for (int g = rank * tp; g < (rank + 1) * tp; ++g) {
          double copies = 0.0;
          for (const auto& layer : p.placement.layers) {
            const auto first = layer.phy2log.begin() + static_cast<std::ptrdiff_t>(g) * layer.slots_per_gpu;
            copies +=
                static_cast<double>(std::count_if(first, first + layer.slots_per_gpu, [](int e) { return e >= 0; }));
          }
          blocks = std::min(
              blocks,
              serving::plan_memory_for_experts(cfg.model, cfg.gpu, copies, cfg.serving.scheduler, tp).kv_blocks);
        }
        p.kv_blocks_by_rank.push_back(blocks);
      }
    }
  }
  if (drift) {
    // Each group's trigger sees its own GPUs' curves; the reference is the load the placement was made for.
    const hardware::CostModel* cost_model = p.cost.get();
    auto made = std::make_shared<int>(0);
    p.make_rebalance = [in, opt = cfg.policy.drift, cost_model, made, model = cfg.model, ep = cfg.ep_size,
                        profile = cfg.policy.cost_profile, streams] {
      const int index = (*made)++;
      auto curves = serving::make_cost_curves(model, *cost_model, index * ep, ep, in.slots_per_gpu, profile, streams);
      return std::make_unique<policies::DriftTrigger>(in, std::move(curves), in.expert_load, opt);
    };
  }
  if (director) {
    // The optimiser with the placement's options when the placement is DIRECTOR too, else its defaults
    // with the one-solve LP (the binary search finds the same optimum, slower).
    policies::DirectorOptions dopt;
    dopt.lp.mode = "direct";
    if (cfg.policy.placement == "director") {
      core::ParamTable t({core::ParamLayer{cfg.policy.placement_options.get(), cfg.source}},
                         "policy.placement_options");
      dopt = policies::parse_director_options(t);
    }
    p.make_rebalance = [in, dopt, trig = cfg.policy.director] {
      return std::make_unique<policies::DirectorTrigger>(in, dopt, trig, in.expert_load);
    };
  }
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
