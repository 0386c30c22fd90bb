// SPDX-License-Identifier: Apache-2.0
#include "hardware/topology.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace epsim::hardware {

Topology::Topology(int nodes, int gpus_per_node, LinkSpec intra, LinkSpec inter)
    : nodes_(nodes), gpus_per_node_(gpus_per_node), intra_(intra), inter_(inter) {
  if (nodes < 1 || gpus_per_node < 1) {
    throw core::Error("Topology: need at least one node and one GPU per node");
  }
}

LinkSpec among(const LinkSpec& intra, int gpus) {
  if (intra.mesh_peers <= 0 || gpus - 1 >= intra.mesh_peers) {
    return intra;
  }
  LinkSpec l = intra;
  l.mesh_peers = std::max(gpus - 1, 0);
  l.bw_gbps = intra.bw_gbps * l.mesh_peers / intra.mesh_peers;
  return l;
}

LinkSpec parse_link(core::ParamTable& t, LinkSpec defaults) {
  LinkSpec l;
  l.bw_gbps = t.real("bw_gbps", defaults.bw_gbps, "bandwidth per GPU per direction, GB/s", core::k_positive);
  l.latency_us = t.real("latency_us", defaults.latency_us, "one-way latency, microseconds", core::k_non_negative);
  l.efficiency = t.real("efficiency", defaults.efficiency, "achieved share of bw_gbps (0, 1]", {0.0, 1.0, true});
  t.finish();
  return l;
}

}  // namespace epsim::hardware
