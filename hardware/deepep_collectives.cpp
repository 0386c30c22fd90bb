// SPDX-License-Identifier: Apache-2.0
#include "hardware/deepep_collectives.hpp"

#include <algorithm>

namespace epsim::hardware {

namespace {
// The ports as DeepEP's normal kernels see them: each link at the share of its rate they reach.
Topology at_kernel_rate(const Topology& group, const EpCommConfig& comm) {
  LinkSpec intra = group.intra();
  LinkSpec inter = group.inter();
  intra.bw_gbps *= comm.nvlink_efficiency;
  inter.bw_gbps *= comm.rdma_efficiency;
  return Topology(group.nodes(), group.gpus_per_node(), intra, inter);
}
}  // namespace

DeepEpNormal::DeepEpNormal(const Topology& group, const EpCommConfig& comm)
    : DeepEpBase(group),
      topo_(at_kernel_rate(group, comm)),
      alpha_ns_(comm.alpha_us * 1e3),
      sm_cap_gbps_(static_cast<double>(comm.comm_sms) * comm.sm_gbps) {
  traffic_.resize(topo_.num_gpus());
  unit_.resize(topo_.num_gpus());
  node_tokens_.setZero(topo_.nodes());
  node_gpu_tokens_.setZero(topo_.nodes());
  rail_share_.setZero(topo_.gpus_per_node());
  gpu_tokens_.setZero(topo_.num_gpus());
}

void DeepEpNormal::separable(const EpTraffic& t) {
  const Eigen::ArrayXd& share = *t.share;
  const Eigen::ArrayXd& pairs = *t.pairs;
  const int gpn = topo_.gpus_per_node();
  const int gpus = topo_.num_gpus();
  node_tokens_.setZero();
  rail_share_.setZero();
  for (int g = 0; g < gpus; ++g) {
    gpu_tokens_(g) = pairs(g) * (t.gpu_fanout != nullptr ? (*t.gpu_fanout)(g) : 1.0);
    node_tokens_(topo_.node_of(g)) += pairs(g);
    rail_share_(g % gpn) += share(g);
  }
  if (t.node_fanout != nullptr) {
    node_tokens_ *= *t.node_fanout;
  }
  const double all_nodes = node_tokens_.sum();
  for (int n = 0; n < topo_.nodes(); ++n) {
    double sum = 0.0;  // in GPU order, once per node (not once per GPU of it)
    for (int h = n * gpn; h < (n + 1) * gpn; ++h) {
      sum += gpu_tokens_(h);
    }
    node_gpu_tokens_(n) = sum;
  }
  for (int g = 0; g < gpus; ++g) {
    const int n = topo_.node_of(g);
    const double held = rail_share_(g % gpn);  // rail r's tokens sit on g once they reach node n
    traffic_.send_inter(g) = share(g) * (all_nodes - node_tokens_(n));
    traffic_.recv_inter(g) = node_tokens_(n) * (held - share(g));
    traffic_.send_intra(g) = held * (node_gpu_tokens_(n) - gpu_tokens_(g));
    traffic_.recv_intra(g) = gpu_tokens_(g) * (1.0 - held);
  }
}

void DeepEpNormal::per_origin(const EpTraffic& t) {
  const Eigen::MatrixXd& x = *t.pair_matrix;
  const int gpn = topo_.gpus_per_node();
  const int gpus = topo_.num_gpus();
  traffic_.set_zero();
  for (int o = 0; o < gpus; ++o) {
    const int m = topo_.node_of(o);
    const int rail = o % gpn;
    for (int n = 0; n < topo_.nodes(); ++n) {
      if (n == m) {
        continue;
      }
      const double to_node = x.row(o).segment(static_cast<Eigen::Index>(n) * gpn, gpn).sum() *
                             (t.node_fanout != nullptr ? (*t.node_fanout)(n) : 1.0);
      traffic_.send_inter(o) += to_node;
      traffic_.recv_inter(n * gpn + rail) += to_node;
    }
    for (int g = 0; g < gpus; ++g) {
      const int forwarder = topo_.node_of(g) * gpn + rail;
      if (forwarder == g) {
        continue;
      }
      const double d = x(o, g) * (t.gpu_fanout != nullptr ? (*t.gpu_fanout)(g) : 1.0);
      traffic_.send_intra(forwarder) += d;
      traffic_.recv_intra(g) += d;
    }
  }
}

void DeepEpNormal::flows(const EpTraffic& t) {
  if (t.pair_matrix != nullptr) {
    per_origin(t);
  } else {
    separable(t);
  }
}

CollectiveCost DeepEpNormal::priced() const {
  CollectiveCost c = all_to_all_cost(topo_, traffic_, alpha_ns_);
  if (sm_cap_gbps_ > 0.0 && c.time_ns > 0.0) {
    // Every byte a GPU sends, over RDMA or forwarded over NVLink, passes through its channels' SMs.
    const double sm_ns = (traffic_.send_inter + traffic_.send_intra).maxCoeff() / sm_cap_gbps_;
    c.time_ns = std::max(c.time_ns, alpha_ns_ + sm_ns);
  }
  return c;
}

CollectiveCost DeepEpNormal::ep_exchange(const EpTraffic& t, double token_bytes) {
  flows(t);
  traffic_.scale(token_bytes);
  return priced();
}

CollectiveModel::ExchangePair DeepEpNormal::ep_exchange_pair(const EpTraffic& t, double dispatch_bytes,
                                                             double combine_bytes) {
  // The same numbers as two ep_exchange calls (combine first): the flows scaled from one copy.
  flows(t);
  unit_ = traffic_;  // equal sizes: no allocation
  ExchangePair p;
  traffic_.scale(combine_bytes);
  p.combine = priced();
  traffic_ = unit_;
  traffic_.scale(dispatch_bytes);
  p.dispatch = priced();
  return p;
}

DeepEpLowLatency::DeepEpLowLatency(const Topology& group, const EpCommConfig& comm)
    : DeepEpBase(group), topo_(group), alpha_ns_(comm.alpha_us * 1e3), message_ns_(comm.message_ns) {
  traffic_.resize(topo_.num_gpus());
  messages_.setZero(topo_.num_gpus());
  node_a_.setZero(topo_.nodes());
  node_b_.setZero(topo_.nodes());
}

CollectiveCost DeepEpLowLatency::ep_exchange(const EpTraffic& t, double token_bytes) {
  if (t.pair_matrix != nullptr) {
    aggregate_traffic(topo_, *t.pair_matrix, traffic_);
  } else {
    separable_traffic(topo_, *t.share, *t.pairs, 1.0, node_a_, node_b_, traffic_);  // in pairs, not bytes
  }
  messages_ = traffic_.send_intra + traffic_.send_inter;  // one per pair
  traffic_.scale(token_bytes);
  CollectiveCost c = all_to_all_cost(topo_, traffic_, alpha_ns_);
  if (message_ns_ > 0.0 && c.time_ns > 0.0) {
    c.time_ns += messages_.maxCoeff() * message_ns_;
  }
  return c;
}

namespace {
// The configured kernels with the family's own fitted startup and per-message cost (auto has none).
EpCommConfig family(DispatchAlgorithm algorithm, const EpCommConfig& comm) {
  const EpCommConfig fitted = algorithm_defaults(algorithm);
  EpCommConfig c = comm;
  c.algorithm = algorithm;
  c.alpha_us = fitted.alpha_us;
  c.message_ns = fitted.message_ns;
  return c;
}
}  // namespace

DeepEpAuto::DeepEpAuto(const Topology& group, const EpCommConfig& comm)
    : DeepEpBase(group),
      normal_(group, family(DispatchAlgorithm::deepep_normal, comm)),
      low_(group, family(DispatchAlgorithm::deepep_low_latency, comm)) {}

}  // namespace epsim::hardware
