// SPDX-License-Identifier: Apache-2.0
#pragma once
// All-reduces as NCCL runs them on a cluster: NCCL's algorithm and protocol choice (nccl_tuning.hpp) over
// the port view's links. The scale-up link's achieved bandwidth is the ring's and the tree's bus
// bandwidth; across nodes the bus bandwidth is at most the node's NICs' achieved bandwidth (every ring
// leaves and enters each node once per channel, the channels spread over the NICs: a node sends as many
// bytes out as each of its GPUs sends over NVLink); NVLink SHARP runs on one node at the link's measured
// rate. The port view's scale-up latency (the cluster's collective_overhead_us plus the path between two
// GPUs) is charged once, as the launch and synchronisation cost NCCL's tuning model leaves out.
#include "hardware/nccl_tuning.hpp"
#include "hardware/topology.hpp"

namespace epsim::hardware {

/// What NCCL's model needs of `ports` (a port view: NetworkGraph::port_view()) for a collective over its
/// first `gpus` GPUs (on a mesh node, fewer GPUs than the node reach fewer of its links).
NcclFabric nccl_fabric(const Topology& ports, int gpus);

/// NCCL's all-reduce of `bytes` per GPU over the first `gpus` GPUs of `ports` (2 or more; past one node,
/// spread over as few nodes as hold them), with the algorithm and protocol NCCL picks.
NcclCost nccl_all_reduce_on(const Topology& ports, int gpus, double bytes);

/// A tensor-parallel all-reduce of `bytes` per GPU over `gpus` GPUs of one node on the port view's
/// scale-up link `intra`, ns (the time of nccl_all_reduce_on).
NcclCost intra_node_all_reduce(const LinkSpec& intra, int gpus, double bytes);
double intra_node_all_reduce_ns(const LinkSpec& intra, int gpus, double bytes);

}  // namespace epsim::hardware
