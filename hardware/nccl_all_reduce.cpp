// SPDX-License-Identifier: Apache-2.0
#include "hardware/nccl_all_reduce.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace epsim::hardware {

namespace {

// NCCL's view of one node's scale-up link (the port view's: achieved bandwidth, launch latency), for a
// collective over `gpus` GPUs. On a mesh its channels run over disjoint rings, one peer link each, so the
// bus bandwidth is the links that `gpus_on_node` GPUs have between them (RCCL on MI300X: AMD's xGMI blog).
NcclFabric node_fabric(const LinkSpec& intra, int gpus_on_node) {
  NcclFabric f;
  f.hw = intra.nccl_hw;
  f.bus_gbps = among(intra, gpus_on_node).effective_gbps();
  f.nvls_gbps = intra.nvls_gbps;
  f.ll_max_gbps = intra.nccl_ll_max_gbps;
  f.net_latency_us = 0.0;  // NCCL's InfiniBand plugin reports none: its network hop constants carry it
  f.launch_us = intra.latency_us;
  return f;
}

}  // namespace

NcclFabric nccl_fabric(const Topology& ports, int gpus) {
  NcclFabric f = node_fabric(ports.intra(), std::min(gpus, ports.gpus_per_node()));
  f.net_bus_gbps = ports.gpus_per_node() * ports.inter().effective_gbps();
  return f;
}

NcclCost nccl_all_reduce_on(const Topology& ports, int gpus, double bytes) {
  const int per_node = ports.gpus_per_node();
  if (gpus < 2 || gpus > ports.num_gpus()) {
    throw core::Error("an all-reduce needs 2 GPUs or more, at most the cluster's");
  }
  const int nodes = (gpus + per_node - 1) / per_node;
  return nccl_all_reduce(nccl_fabric(ports, gpus), gpus, nodes, bytes);
}

NcclCost intra_node_all_reduce(const LinkSpec& intra, int gpus, double bytes) {
  if (gpus < 2) {
    return NcclCost{0.0, NcclAlgo::ring, NcclProto::simple};
  }
  return nccl_all_reduce(node_fabric(intra, gpus), gpus, 1, bytes);  // the step loop's path: no topology built
}

double intra_node_all_reduce_ns(const LinkSpec& intra, int gpus, double bytes) {
  return intra_node_all_reduce(intra, gpus, bytes).time_ns;
}

}  // namespace epsim::hardware
