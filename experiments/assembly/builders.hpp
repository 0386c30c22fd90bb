// SPDX-License-Identifier: Apache-2.0
#pragma once
// The pieces every command builds from an experiment the same way: `run`, `slo` (through
// build_simulation), `place --config` and `cost --config` call these and nothing else, so a placement
// computed offline sees exactly the curves, links and GPUs a run would.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "experiments/assembly/experiment_config.hpp"
#include "experiments/assembly/load_window.hpp"
#include "hardware/network_graph.hpp"
#include "hardware/roofline.hpp"
#include "hardware/topology.hpp"
#include "policies/cost_curves.hpp"
#include "policies/placement_policy.hpp"

namespace epsim::experiments {

/// Every GPU of the cluster: static speed factors drawn with the run's seed, variability dynamics, and
/// each pool's own GPU model where it differs.
std::unique_ptr<hardware::CostModel> make_cost_model(const ExperimentConfig& cfg);

/// The index in cfg.pools of the primary pool (the first that decodes).
std::size_t primary_pool_index(const ExperimentConfig& cfg);

/// The EP group a pool's placement is made for: the pool's first; every group of the pool starts from it.
int placed_group(const ExperimentConfig& cfg, std::size_t pool);

/// C_g(n) of GPUs first_gpu .. first_gpu + gpus - 1 holding `slots_per_gpu` expert slots each, as the
/// policies see them (cfg.policy.cost_profile). In exact mode the curves point to `cost`, which must
/// outlive them.
std::shared_ptr<const policies::CostCurves> make_curves(const ExperimentConfig& cfg, const hardware::CostModel& cost,
                                                        int first_gpu, int gpus, int slots_per_gpu);
/// The same for EP group `group` of the experiment (its pool's size and slots per GPU).
std::shared_ptr<const policies::CostCurves> make_group_curves(const ExperimentConfig& cfg,
                                                              const hardware::CostModel& cost, int group);

/// The cluster's network graph (its port view prices the port model's all-to-alls).
std::shared_ptr<const hardware::NetworkGraph> make_network(const ExperimentConfig& cfg);
/// Whether a run uses the graph itself: graph collectives, KV hand-offs or weight migrations.
bool network_in_use(const ExperimentConfig& cfg);

/// The placement input of pool `pool`'s placed group: its shape, links and token bytes (DIRECTOR's
/// communication model), the seed, and what the pool's policies declared they need: the load window of
/// that group's steps (load_window.hpp), C_g(n) of its GPUs, co-selection counts. `ports` is the
/// cluster's port view (NetworkGraph::port_view()).
/// `window`: the pool's profiled load window (load_window.hpp's profile_pool_windows), required when its
/// policies declared they need one.
policies::PlacementInput make_placement_input(const ExperimentConfig& cfg, const hardware::CostModel& cost,
                                              const hardware::Topology& ports, std::size_t pool,
                                              const LoadWindow* window);

}  // namespace epsim::experiments
