#include "hardware/all_to_all.hpp"

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

void separable_traffic(const Topology& topo, const Eigen::ArrayXd& share, const Eigen::ArrayXd& pairs,
                       double unit_bytes, Eigen::ArrayXd& node_a, Eigen::ArrayXd& node_b, PerGpuTraffic& out) {
  // Nothing crosses a wire for a GPU's own tokens.
  Eigen::ArrayXd& node_pairs = node_a;
  Eigen::ArrayXd& node_share = node_b;
  node_pairs.setZero();
  node_share.setZero();
  const int gpus = topo.num_gpus();
  for (int g = 0; g < gpus; ++g) {
    const int n = topo.node_of(g);
    node_share(n) += share(g);
    node_pairs(n) += pairs(g);
  }
  const double all_pairs = pairs.sum();
  for (int g = 0; g < gpus; ++g) {
    const int n = topo.node_of(g);
    out.send_intra(g) = share(g) * (node_pairs(n) - pairs(g)) * unit_bytes;
    out.send_inter(g) = share(g) * (all_pairs - node_pairs(n)) * unit_bytes;
    out.recv_intra(g) = pairs(g) * (node_share(n) - share(g)) * unit_bytes;
    out.recv_inter(g) = pairs(g) * (1.0 - node_share(n)) * unit_bytes;
  }
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
