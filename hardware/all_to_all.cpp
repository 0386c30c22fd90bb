// SPDX-License-Identifier: Apache-2.0
#include "hardware/all_to_all.hpp"

#include <algorithm>
#include <limits>

namespace epsim::hardware {

void PerGpuTraffic::resize(int gpus) {
  send_intra.resize(gpus);
  send_inter.resize(gpus);
  recv_intra.resize(gpus);
  recv_inter.resize(gpus);
  set_zero();
}

void PerGpuTraffic::set_zero() {
  send_intra.setZero();
  send_inter.setZero();
  recv_intra.setZero();
  recv_inter.setZero();
}

void PerGpuTraffic::scale(double factor) {
  send_intra *= factor;
  send_inter *= factor;
  recv_intra *= factor;
  recv_inter *= factor;
}

void aggregate_traffic(const Topology& topo, const Eigen::MatrixXd& bytes, PerGpuTraffic& out) {
  const auto n = static_cast<int>(bytes.rows());
  if (out.send_intra.size() != n) {
    out.resize(n);
  } else {
    out.set_zero();
  }
  for (int s = 0; s < n; ++s) {
    for (int d = 0; d < n; ++d) {
      if (s == d) {
        continue;
      }
      const double b = bytes(s, d);
      if (topo.node_of(s) == topo.node_of(d)) {
        out.send_intra(s) += b;
        out.recv_intra(d) += b;
      } else {
        out.send_inter(s) += b;
        out.recv_inter(d) += b;
      }
    }
  }
}

double port_transfer_ns(const Topology& topo, const PerGpuTraffic& t) {
  const double intra_ns = t.send_intra.max(t.recv_intra).maxCoeff() / topo.intra().bw_gbps;
  const double inter_ns = topo.nodes() > 1 ? t.send_inter.max(t.recv_inter).maxCoeff() / topo.inter().bw_gbps : 0.0;
  return std::max(intra_ns, inter_ns);
}

namespace {
// Each node's share of the tokens and token-expert pairs, summed in GPU order (both separable forms
// below take them from here, so their arithmetic is the same term for term).
void node_sums(const Topology& topo, const Eigen::ArrayXd& share, const Eigen::ArrayXd& pairs,
               Eigen::ArrayXd& node_share, Eigen::ArrayXd& node_pairs) {
  node_pairs.setZero();
  node_share.setZero();
  // Node-major walks: GPU g of node n is n x gpus_per_node + i (no division per GPU).
  for (int n = 0, g = 0; n < topo.nodes(); ++n) {
    for (int i = 0; i < topo.gpus_per_node(); ++i, ++g) {
      node_share(n) += share(g);
      node_pairs(n) += pairs(g);
    }
  }
}
}  // namespace

void separable_traffic(const Topology& topo, const Eigen::ArrayXd& share, const Eigen::ArrayXd& pairs,
                       double unit_bytes, Eigen::ArrayXd& node_a, Eigen::ArrayXd& node_b, PerGpuTraffic& out) {
  // Nothing crosses a wire for a GPU's own tokens.
  Eigen::ArrayXd& node_pairs = node_a;
  Eigen::ArrayXd& node_share = node_b;
  node_sums(topo, share, pairs, node_share, node_pairs);
  const int gpn = topo.gpus_per_node();
  const int nodes = topo.nodes();
  const double all_pairs = pairs.sum();
  for (int n = 0, g = 0; n < nodes; ++n) {
    const double np = node_pairs(n);
    const double ns = node_share(n);
    for (int i = 0; i < gpn; ++i, ++g) {
      out.send_intra(g) = share(g) * (np - pairs(g)) * unit_bytes;
      out.send_inter(g) = share(g) * (all_pairs - np) * unit_bytes;
      out.recv_intra(g) = pairs(g) * (ns - share(g)) * unit_bytes;
      out.recv_inter(g) = pairs(g) * (1.0 - ns) * unit_bytes;
    }
  }
}

PortTotals separable_port_totals(const Topology& topo, const Eigen::ArrayXd& share, const Eigen::ArrayXd& pairs,
                                 Eigen::ArrayXd& node_a, Eigen::ArrayXd& node_b, PerGpuTraffic& out) {
  // separable_traffic's arithmetic, term for term (unit_bytes = 1 multiplies exactly).
  Eigen::ArrayXd& node_pairs = node_a;
  Eigen::ArrayXd& node_share = node_b;
  node_sums(topo, share, pairs, node_share, node_pairs);
  const int gpn = topo.gpus_per_node();
  const int nodes = topo.nodes();
  const double all_pairs = pairs.sum();
  double intra_max = -std::numeric_limits<double>::infinity();  // as maxCoeff: the largest element's value
  double inter_max = -std::numeric_limits<double>::infinity();
  for (int n = 0, g = 0; n < nodes; ++n) {
    const double np = node_pairs(n);
    const double ns = node_share(n);
    for (int i = 0; i < gpn; ++i, ++g) {
      const double send_intra = share(g) * (np - pairs(g));
      const double send_inter = share(g) * (all_pairs - np);
      out.send_intra(g) = send_intra;
      out.send_inter(g) = send_inter;
      intra_max = std::max(intra_max, std::max(send_intra, pairs(g) * (ns - share(g))));
      inter_max = std::max(inter_max, std::max(send_inter, pairs(g) * (1.0 - ns)));
    }
  }
  return {out.send_intra.sum(), out.send_inter.sum(), intra_max, inter_max};
}

PortTotals PortTotals::of(const PerGpuTraffic& t) {
  return {t.send_intra.sum(), t.send_inter.sum(), t.send_intra.max(t.recv_intra).maxCoeff(),
          t.send_inter.max(t.recv_inter).maxCoeff()};
}

CollectiveCost PortTotals::cost(const Topology& topo, double token_bytes) const {
  CollectiveCost c;
  c.intra_bytes = intra_sum * token_bytes;
  c.inter_bytes = inter_sum * token_bytes;
  if (c.intra_bytes <= 0.0 && c.inter_bytes <= 0.0) {
    return c;
  }
  const double alpha_ns = (c.inter_bytes > 0.0 ? topo.inter().latency_us : topo.intra().latency_us) * 1e3;
  const double intra_ns = intra_max * token_bytes / topo.intra().bw_gbps;
  const double inter_ns = topo.nodes() > 1 ? inter_max * token_bytes / topo.inter().bw_gbps : 0.0;
  c.time_ns = alpha_ns + std::max(intra_ns, inter_ns);
  return c;
}

CollectiveCost all_to_all_cost(const Topology& topo, const PerGpuTraffic& t, double alpha_ns) {
  CollectiveCost c;
  c.intra_bytes = t.send_intra.sum();
  c.inter_bytes = t.send_inter.sum();
  if (c.intra_bytes <= 0.0 && c.inter_bytes <= 0.0) {
    return c;
  }
  c.time_ns = alpha_ns + port_transfer_ns(topo, t);
  return c;
}

CollectiveCost all_to_all_cost(const Topology& topo, const PerGpuTraffic& t) {
  const bool crosses = t.send_inter.sum() > 0.0;
  return all_to_all_cost(topo, t, (crosses ? topo.inter().latency_us : topo.intra().latency_us) * 1e3);
}

}  // namespace epsim::hardware
