// SPDX-License-Identifier: Apache-2.0
#include "experiments/assembly/run_outputs.hpp"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace epsim::experiments {

RunOutputs::RunOutputs(serving::Simulator& sim, const ExperimentConfig& cfg) {
  const OutputsConfig& o = cfg.outputs;
  if (o.steps_csv) {
    sim.add_observer(&steps_.emplace());
    logs_.steps = &*steps_;
  }
  if (o.tokens_csv) {
    sim.add_observer(&tokens_.emplace());
    logs_.tokens = &*tokens_;
  }
  if (o.layers_csv) {
    sim.add_observer(&layers_.emplace(o.layers_every));
    logs_.layers = &*layers_;
  }
  if (o.timeline) {
    const auto max_bytes = static_cast<std::int64_t>(o.timeline_max_mib * 1024.0 * 1024.0);
    sim.add_observer(&timeline_.emplace(o.timeline_steps, max_bytes));
    // An EP group's one-direction capacity per level, for its pool's EP size: every GPU's scale-up link
    // inside nodes; between nodes its NICs (none when the group fits in one node).
    const hardware::ClusterSpec& c = cfg.cluster;
    const int groups = serving::total_groups(cfg.pools);
    std::vector<serving::TimelineLog::LinkCapacity> capacity;
    capacity.reserve(static_cast<std::size_t>(groups));
    for (int g = 0; g < groups; ++g) {
      const int ep = serving::pool_of_group(cfg.pools, g).shape.ep_size;
      const int group_nodes = (ep + c.gpus_per_node - 1) / c.gpus_per_node;
      const double inter_gbps =
          group_nodes > 1 ? std::min(ep, group_nodes * c.nics_per_node) * c.nic_link.bw_gbps : 0.0;
      capacity.push_back({ep * c.scale_up_link.bw_gbps, inter_gbps});
    }
    timeline_->set_link_capacity(std::move(capacity));
    logs_.timeline = &*timeline_;
  }
  if (o.events_csv) {
    sim.add_observer(&events_.emplace());
    logs_.events = &*events_;
  }
  if (o.gpu_layers_csv) {
    const int groups = serving::total_groups(cfg.pools);
    std::vector<int> group_gpus;
    group_gpus.reserve(static_cast<std::size_t>(groups));
    for (int g = 0; g < groups; ++g) {
      group_gpus.push_back(serving::pool_of_group(cfg.pools, g).shape.ep_size);
    }
    sim.add_observer(&gpu_layers_.emplace(std::move(group_gpus), static_cast<int>(cfg.model.num_moe_layers())));
    logs_.gpu_layers = &*gpu_layers_;
  }
}

}  // namespace epsim::experiments
