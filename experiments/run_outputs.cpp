#include "experiments/run_outputs.hpp"

#include <algorithm>
#include <cstdint>

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
    // An EP group's one-direction capacity per level: every GPU's scale-up link inside nodes; between
    // nodes its NICs (none when the group fits in one node).
    const hardware::ClusterSpec& c = cfg.cluster;
    const int group_nodes = (cfg.ep_size + c.gpus_per_node - 1) / c.gpus_per_node;
    const double inter_gbps =
        group_nodes > 1 ? std::min(cfg.ep_size, group_nodes * c.nics_per_node) * c.nic_link.bw_gbps : 0.0;
    timeline_->set_link_capacity(cfg.ep_size * c.scale_up_link.bw_gbps, inter_gbps);
    logs_.timeline = &*timeline_;
  }
  if (o.events_csv) {
    sim.add_observer(&events_.emplace());
    logs_.events = &*events_;
  }
  if (o.gpu_layers_csv) {
    sim.add_observer(&gpu_layers_.emplace(cfg.cluster.num_gpus() / cfg.ep_size,
                                          static_cast<int>(cfg.model.num_moe_layers()), cfg.ep_size));
    logs_.gpu_layers = &*gpu_layers_;
  }
}

}  // namespace epsim::experiments
