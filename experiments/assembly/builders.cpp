// SPDX-License-Identifier: Apache-2.0
#include "experiments/assembly/builders.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"
#include "core/random_streams.hpp"
#include "experiments/assembly/load_window.hpp"
#include "models/layer_work.hpp"
#include "sim/expert_cost_profile.hpp"
#include "sim/simulator.hpp"

namespace epsim::experiments {

std::unique_ptr<hardware::CostModel> make_cost_model(const ExperimentConfig& cfg) {
  auto cost = std::make_unique<hardware::RooflineCostModel>(cfg.gpu, resolved_speed_factors(cfg), cfg.variability,
                                                            core::RandomStreams(cfg.seed_of(SeedFamily::cluster)));
  for (const serving::PoolSpec& pool : cfg.pools) {
    if (pool.gpu) {
      cost->set_gpu_model(pool.shape.first_gpu, pool.gpus(), *pool.gpu);
    }
  }
  return with_measured_cost(cfg, std::move(cost));
}

std::size_t primary_pool_index(const ExperimentConfig& cfg) {
  return static_cast<std::size_t>(&cfg.primary_pool() - cfg.pools.data());
}

int placed_group(const ExperimentConfig& cfg, std::size_t pool) {
  return cfg.pools.at(pool).shape.first_group;
}

std::shared_ptr<const policies::CostCurves> make_curves(const ExperimentConfig& cfg, const hardware::CostModel& cost,
                                                        int first_gpu, int gpus, int slots_per_gpu) {
  return serving::make_cost_curves(cfg.model, cost, first_gpu, gpus, slots_per_gpu, cfg.policy.cost_profile,
                                   core::RandomStreams(cfg.seed_of(SeedFamily::cluster)));
}

std::shared_ptr<const policies::CostCurves> make_group_curves(const ExperimentConfig& cfg,
                                                              const hardware::CostModel& cost, int group) {
  const serving::PoolSpec& pool = serving::pool_of_group(cfg.pools, group);
  return serving::make_cost_curves(cfg.model, cost, pool.shape.group_first_gpu(group), pool.shape.ep_size,
                                   pool.slots_per_gpu(cfg.model.routed_experts), pool.policy.cost_profile,
                                   core::RandomStreams(cfg.seed_of(SeedFamily::cluster)));
}

std::shared_ptr<const hardware::NetworkGraph> make_network(const ExperimentConfig& cfg) {
  return std::make_shared<const hardware::NetworkGraph>(cfg.cluster);
}

bool network_in_use(const ExperimentConfig& cfg) {
  return cfg.disaggregated() || std::any_of(cfg.pools.begin(), cfg.pools.end(), [&](const serving::PoolSpec& p) {
           return cfg.collectives.uses_graph(p.shape.ep_size) || p.policy.rebalance.trigger != nullptr;
         });
}

policies::PlacementInput make_placement_input(const ExperimentConfig& cfg, const hardware::CostModel& cost,
                                              const hardware::Topology& ports, std::size_t pool,
                                              const LoadWindow* window) {
  const serving::PoolSpec& spec = cfg.pools.at(pool);
  const policies::PolicyNeeds& needs = spec.policy.needs;
  const int placed = spec.shape.first_group;
  const int ep = spec.shape.ep_size;
  const hardware::Topology group = serving::group_topology(ports, ep);
  policies::PlacementInput in = policies::PlacementInput::shape(
      static_cast<int>(cfg.model.num_moe_layers()), static_cast<int>(cfg.model.routed_experts), ep, group.nodes(),
      spec.slots_per_gpu(cfg.model.routed_experts), static_cast<int>(cfg.model.expert_groups));
  in.seed = cfg.seed;
  // DIRECTOR's communication model: a token's hidden state over the group's links (scale-up within a
  // node, scale-out across), in bytes per ns = GB/s.
  in.token_bytes = static_cast<double>(cfg.model.hidden_size * cfg.model.activation_bytes);
  in.expert_bytes = models::expert_weight_bytes(cfg.model);
  std::vector<double> links;
  for (int a = 0; a < ep; ++a) {
    for (int b = 0; b < ep; ++b) {
      links.push_back(a / group.gpus_per_node() == b / group.gpus_per_node() ? group.intra().bw_gbps
                                                                             : group.inter().bw_gbps);
    }
  }
  in.set_link_bandwidths(std::move(links));
  // The inputs the pool's policies declared (PolicyNeeds), each checked against the shape as it is set.
  if (needs.load_window) {
    if (window == nullptr) {
      throw core::Error(
          fmt::format("pool \"{}\": its placement needs a load window, which was not profiled "
                      "(profile_pool_windows before build_simulation)",
                      spec.name));
    }
    in.set_load_window(window->total, window->steps, window->prefill_steps);
  }
  if (needs.coactivation) {
    in.set_coactivation(profile_coactivation(cfg, pool));
  }
  if (needs.transitions) {
    in.set_transitions(profile_transitions(cfg, pool));
  }
  if (needs.cost_curves) {
    in.set_cost_curves(make_group_curves(cfg, cost, placed));
  }
  return in;
}

}  // namespace epsim::experiments
