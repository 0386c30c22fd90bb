// SPDX-License-Identifier: Apache-2.0
#pragma once
// The model's price of one row of a measurement table, computed exactly as a run computes the same work:
// a kernel by its GPU's roofline (calibration/measured_work.hpp turns the shape into work), a collective
// on a cluster of the row's shape (GPUs, GPUs per node) built from a base cluster's links:
// - all_reduce: NCCL's algorithm and protocol choice (ring, tree, NVLink SHARP; LL, LL128, Simple) by its
//   own tuning model, inside a node as a run's tensor-parallel all-reduce, and across nodes;
// - all_to_all: `bytes` per GPU split evenly over the group (nccl-tests' alltoall_perf), on the graph up
//   to 16 GPUs and the port model beyond (as a run's collective model `auto`);
// - send_recv: every GPU sends `bytes` to the next one (nccl-tests' sendrecv_perf), on the graph.
#include <memory>

#include "calibration/measurement_table.hpp"
#include "hardware/cluster_spec.hpp"
#include "hardware/collective_model.hpp"
#include "hardware/gpu_spec.hpp"
#include "hardware/hardware_config.hpp"
#include "hardware/network_graph.hpp"

namespace epsim::experiments {

/// A kernel row's latency on `gpu` at nominal speed, microseconds.
double price_kernel_row_us(const calibration::Measurement& row, const hardware::GpuSpec& gpu);

/// `base` reshaped to the row: its GPUs per node, as many nodes as its GPUs need. Throws core::Error when
/// the row crosses nodes and the cluster has no scale-out fabric.
hardware::ClusterSpec cluster_for_row(const hardware::ClusterSpec& base, const calibration::Measurement& row);

/// The GPUs of a group of `gpus` GPUs from GPU 0 rounded up to whole nodes of `graph` (all of them when
/// they fit in one node).
int whole_node_gpus(const hardware::NetworkGraph& graph, int gpus);

/// The run's collective model (collective_model.hpp, NCCL: the graph for at most `cfg.graph_max_gpus` GPUs,
/// per-GPU ports beyond) over the whole_node_gpus(gpus) GPUs from GPU 0 of `graph`'s cluster.
std::unique_ptr<hardware::CollectiveModel> group_collective_model(std::shared_ptr<const hardware::NetworkGraph> graph,
                                                                  const hardware::CollectiveConfig& cfg, int gpus);

/// An all-reduce of `bytes` per GPU over GPUs 0 .. gpus-1 of `graph`'s cluster (2 or more), as NCCL runs it
/// (hardware/nccl_all_reduce.hpp: the algorithm and protocol NCCL's tuning model picks, inside a node or
/// across nodes); `choice` says which. The bytes are the chosen algorithm's traffic.
hardware::CollectiveCost all_reduce_cost(const hardware::NetworkGraph& graph, int gpus, double bytes,
                                         hardware::NcclCost* choice = nullptr);

/// A collective row's latency on `base` reshaped to the row, microseconds.
double price_collective_row_us(const calibration::Measurement& row, const hardware::ClusterSpec& base);

}  // namespace epsim::experiments
