// SPDX-License-Identifier: Apache-2.0
#pragma once
// Collective costs from the actual traffic matrix (bytes from every GPU to every GPU) over the network
// graph: every flow takes its route, bytes add up on each arc, and the collective takes
//   overhead + the largest route latency among its flows + max over arcs (arc bytes / arc bandwidth),
// i.e. the most loaded link or endpoint decides. All-gather, all-reduce and point-to-point transfers
// are expressed as traffic matrices too.
#include <Eigen/Core>
#include <span>
#include <vector>

#include "hardware/all_to_all.hpp"
#include "hardware/network_graph.hpp"

namespace epsim::hardware {

/// Costs collectives on a graph; holds the per-arc workspace, so one instance per user (not thread-safe).
class CollectiveCoster {
 public:
  explicit CollectiveCoster(const NetworkGraph& graph);

  /// `bytes(s, d)`: bytes from GPU gpu_offset + s to GPU gpu_offset + d (the diagonal is ignored).
  CollectiveCost cost(const Eigen::MatrixXd& bytes, int gpu_offset = 0);
  /// The arc that decided the last cost() call (-1 if none).
  int bottleneck_arc() const { return bottleneck_; }
  const NetworkGraph& graph() const { return graph_; }

 private:
  void use_group(int gpu_offset, int gpus);

  const NetworkGraph& graph_;
  // The group's routes, looked up once (the graph keeps them): pair s * gpus + d of the GPUs
  // [group_offset_, group_offset_ + group_gpus_) crosses path_arcs_[path_begin_[k] .. path_begin_[k + 1]),
  // indices into the group's own arcs (global_arc_), so the workspace grows with the group, not the cluster.
  int group_offset_ = -1;
  int group_gpus_ = 0;
  std::vector<std::size_t> path_begin_;
  std::vector<int> path_arcs_;
  std::vector<int> global_arc_;
  std::vector<double> latencies_ns_;
  std::vector<double> arc_bytes_;  // per group arc
  std::vector<int> touched_;
  int bottleneck_ = -1;
};

/// All-gather: every GPU sends its `bytes[s]` to every other GPU of the group.
Eigen::MatrixXd all_gather_traffic(const Eigen::ArrayXd& bytes);
/// All-reduce of `bytes` per GPU over `gpus` GPUs, as the ring algorithm's volume: each GPU sends
/// 2 (n - 1) / n x bytes in total, spread evenly over its peers.
Eigen::MatrixXd all_reduce_traffic(int gpus, double bytes);

}  // namespace epsim::hardware
