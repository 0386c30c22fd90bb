#pragma once
// The model's price of one row of a measurement table, computed exactly as a run computes the same work:
// a kernel by its GPU's roofline (calibration/measured_work.hpp turns the shape into work), a collective
// on a cluster of the row's shape (GPUs, GPUs per node) built from a base cluster's links:
// - all_reduce inside a node: ring or NVLink SHARP, the faster (as a run's tensor-parallel all-reduce);
//   across nodes: the ring's traffic over the network graph;
// - all_to_all: `bytes` per GPU split evenly over the group (nccl-tests' alltoall_perf), on the graph up
//   to 16 GPUs and the port model beyond (as a run's collective model `auto`);
// - send_recv: every GPU sends `bytes` to the next one (nccl-tests' sendrecv_perf), on the graph.
#include "calibration/measurement_table.hpp"
#include "hardware/cluster_spec.hpp"
#include "hardware/gpu_spec.hpp"

namespace epsim::experiments {

/// A kernel row's latency on `gpu` at nominal speed, microseconds.
double price_kernel_row_us(const calibration::Measurement& row, const hardware::GpuSpec& gpu);

/// `base` reshaped to the row: its GPUs per node, as many nodes as its GPUs need. Throws core::Error when
/// the row crosses nodes and the cluster has no scale-out fabric.
hardware::ClusterSpec cluster_for_row(const hardware::ClusterSpec& base, const calibration::Measurement& row);

/// A collective row's latency on `base` reshaped to the row, microseconds.
double price_collective_row_us(const calibration::Measurement& row, const hardware::ClusterSpec& base);

}  // namespace epsim::experiments
