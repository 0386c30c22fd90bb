// SPDX-License-Identifier: Apache-2.0
#pragma once
// All-to-all cost from per-GPU send/receive bytes, split into intra-node and inter-node parts. Intra-
// and inter-node transfers use different links and run concurrently; each GPU's port serialises its own
// sends (and its receives), so the collective ends when the busiest port is done:
//   time = alpha + max_g max( max(send_intra_g, recv_intra_g) / bw_intra,
//                             max(send_inter_g, recv_inter_g) / bw_inter )
// alpha is the inter-node latency if any byte leaves a node, else the intra-node one (0 if no bytes).
#include <Eigen/Core>

#include "hardware/topology.hpp"

namespace epsim::hardware {

struct PerGpuTraffic {
  Eigen::ArrayXd send_intra;  ///< bytes each GPU sends to other GPUs of its node
  Eigen::ArrayXd send_inter;  ///< bytes each GPU sends to GPUs of other nodes
  Eigen::ArrayXd recv_intra;
  Eigen::ArrayXd recv_inter;

  void resize(int gpus);
  void set_zero();
  void scale(double factor);
};

struct CollectiveCost {
  double time_ns = 0.0;
  double intra_bytes = 0.0;  ///< total bytes moved inside nodes
  double inter_bytes = 0.0;  ///< total bytes moved between nodes
};

CollectiveCost all_to_all_cost(const Topology& topo, const PerGpuTraffic& traffic);
/// The same with a given startup instead of the topology's latencies (DeepEP's kernels have their own).
CollectiveCost all_to_all_cost(const Topology& topo, const PerGpuTraffic& traffic, double alpha_ns);
/// The bandwidth term alone: the busiest port's bytes over its link, ns.
double port_transfer_ns(const Topology& topo, const PerGpuTraffic& traffic);

/// One traffic pattern's port totals, per token copy: what the port cost needs, so that the same flows
/// at several sizes (a layer's dispatch and combine) are priced once.
struct PortTotals {
  double intra_sum = 0.0;  ///< token copies sent inside nodes
  double inter_sum = 0.0;  ///< ... and between nodes
  double intra_max = 0.0;  ///< the busiest port's copies inside a node (send or receive)
  double inter_max = 0.0;  ///< ... between nodes
  static PortTotals of(const PerGpuTraffic& traffic);
  /// all_to_all_cost of the traffic times `token_bytes`.
  CollectiveCost cost(const Topology& topo, double token_bytes) const;
};

/// Per-GPU aggregates of the separable traffic bytes(s, d) = share(s) x pairs(d) x unit_bytes into `out`
/// (sized already): GPU g sends share_g x (pairs of every other GPU) and receives pairs_g x (share of every
/// other GPU), split by whether the peer shares g's node. `node_a`, `node_b`: per-node workspaces.
void separable_traffic(const Topology& topo, const Eigen::ArrayXd& share, const Eigen::ArrayXd& pairs,
                       double unit_bytes, Eigen::ArrayXd& node_a, Eigen::ArrayXd& node_b, PerGpuTraffic& out);

/// PortTotals::of(separable_traffic(..., 1.0, ...)) bit for bit, in one pass over the GPUs: only the send
/// arrays are written (their sums are the totals); the receive sides enter the maxima as they are computed.
PortTotals separable_port_totals(const Topology& topo, const Eigen::ArrayXd& share, const Eigen::ArrayXd& pairs,
                                 Eigen::ArrayXd& node_a, Eigen::ArrayXd& node_b, PerGpuTraffic& out);

/// Per-GPU aggregates of a full traffic matrix (bytes(s, d), diagonal ignored) into `out` (resized).
void aggregate_traffic(const Topology& topo, const Eigen::MatrixXd& bytes, PerGpuTraffic& out);

}  // namespace epsim::hardware
