// SPDX-License-Identifier: Apache-2.0
#pragma once
// NCCL's own choice of all-reduce algorithm and protocol. NCCL prices every (algorithm, protocol) pair with
// its tuning model and runs the cheapest (src/graph/tuning.cc, ncclTopoTuneModel / ncclTopoGetAlgoTime):
//   time = latency + bytes / algorithm bandwidth,
//   latency = base latency (per algorithm and protocol) + steps x hop latency (per link class),
//   algorithm bandwidth = bus bandwidth x protocol share x the algorithm's bus-to-algorithm ratio.
// epsim prices the same way with NCCL's constants (nccl_tuning.cpp cites them) and takes the bus bandwidth
// from the cluster's links (the achieved link bandwidth NCCL's channels add up to), so it picks what NCCL
// picks and reports which (`epsim cost --collective all_reduce`, column `via`).
#include <string>

namespace epsim::hardware {

enum class NcclAlgo { ring, tree, nvls, nvls_tree };
enum class NcclProto { ll, ll128, simple };

/// NCCL's class of the scale-up path (tuning.cc hwLatencies: NVLink or PCI); the network is its third class.
enum class NcclHw { nvlink, pci };

/// What NCCL's tuning model needs to know of a cluster.
struct NcclFabric {
  NcclHw hw = NcclHw::nvlink;
  double bus_gbps = 0.0;        ///< ring / tree bus bandwidth inside a node: the achieved scale-up bandwidth
  double nvls_gbps = 0.0;       ///< NVLink SHARP all-reduce algorithm bandwidth (one node); 0: no NVLS
  double ll_max_gbps = 0.0;     ///< NCCL's LL bandwidth cap on one node (llMaxBws, by GPU generation); 0: none
  double net_bus_gbps = 0.0;    ///< per-GPU bus bandwidth across nodes: the node's NICs' achieved bandwidth / its GPUs
  double net_latency_us = 0.0;  ///< the network's own latency per inter-node step (NCCL's graph latencyInter)
  double launch_us = 0.0;       ///< added once: the launch and synchronisation cost outside NCCL's model
};

struct NcclCost {
  double time_ns = -1.0;  ///< < 0: the pair is not available there
  NcclAlgo algo = NcclAlgo::ring;
  NcclProto proto = NcclProto::simple;
};

/// NCCL's time for one (algorithm, protocol) pair: an all-reduce of `bytes` per GPU over `gpus` GPUs on
/// `nodes` nodes (gpus a multiple of nodes; 2 GPUs or more); time_ns < 0 where NCCL would not run it.
NcclCost nccl_all_reduce_with(const NcclFabric& f, int gpus, int nodes, double bytes, NcclAlgo algo, NcclProto proto);

/// The pair NCCL picks (the cheapest; ties keep NCCL's order tree < ring < NVLS < NVLS tree, LL < LL128 <
/// Simple).
NcclCost nccl_all_reduce(const NcclFabric& f, int gpus, int nodes, double bytes);

/// "ring/LL", "tree/LL128", "nvls/Simple", "nvlstree/Simple" (NCCL's own names).
std::string nccl_choice_name(NcclAlgo algo, NcclProto proto);

}  // namespace epsim::hardware
