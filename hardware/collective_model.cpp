// SPDX-License-Identifier: Apache-2.0
#include "hardware/collective_model.hpp"

#include "core/error.hpp"
#include "hardware/deepep_collectives.hpp"

namespace epsim::hardware {

PortCollectives::PortCollectives(const Topology& group) : topo_(group) {
  traffic_.resize(topo_.num_gpus());
  node_a_.setZero(topo_.nodes());
  node_b_.setZero(topo_.nodes());
}

CollectiveCost PortCollectives::ep_exchange(const EpTraffic& t, double token_bytes) {
  if (t.pair_matrix != nullptr) {
    aggregate_traffic(topo_, *t.pair_matrix, traffic_);
    traffic_.scale(token_bytes);
    return all_to_all_cost(topo_, traffic_);
  }
  return all_to_all_separable(*t.share, *t.pairs, token_bytes);
}

CollectiveModel::ExchangePair PortCollectives::ep_exchange_pair(const EpTraffic& t, double dispatch_bytes,
                                                                double combine_bytes) {
  PortTotals totals;
  if (t.pair_matrix != nullptr) {
    aggregate_traffic(topo_, *t.pair_matrix, traffic_);
    totals = PortTotals::of(traffic_);
  } else {
    totals = separable_port_totals(topo_, *t.share, *t.pairs, node_a_, node_b_, traffic_);
  }
  return {totals.cost(topo_, dispatch_bytes), totals.cost(topo_, combine_bytes)};
}

CollectiveCost PortCollectives::all_to_all(const Eigen::MatrixXd& bytes) {
  aggregate_traffic(topo_, bytes, traffic_);
  return all_to_all_cost(topo_, traffic_);
}

CollectiveCost PortCollectives::all_to_all_separable(const Eigen::ArrayXd& share, const Eigen::ArrayXd& pairs,
                                                     double pair_bytes) {
  separable_traffic(topo_, share, pairs, pair_bytes, node_a_, node_b_, traffic_);
  return all_to_all_cost(topo_, traffic_);
}

CollectiveCost PortCollectives::all_gather(const Eigen::ArrayXd& bytes) {
  // Each GPU's bytes go once to every peer: (gpus per node - 1) copies inside its node, the rest out.
  Eigen::ArrayXd& node_bytes = node_a_;
  node_bytes.setZero();
  const int gpus = topo_.num_gpus();
  for (int g = 0; g < gpus; ++g) {
    node_bytes(topo_.node_of(g)) += bytes(g);
  }
  const double all_bytes = node_bytes.sum();
  const auto node_peers = static_cast<double>(topo_.gpus_per_node() - 1);
  const auto off_node_peers = static_cast<double>(gpus - topo_.gpus_per_node());
  for (int g = 0; g < gpus; ++g) {
    const double b = bytes(g);
    const int n = topo_.node_of(g);
    traffic_.send_intra(g) = b * node_peers;
    traffic_.send_inter(g) = b * off_node_peers;
    traffic_.recv_intra(g) = node_bytes(n) - b;
    traffic_.recv_inter(g) = all_bytes - node_bytes(n);
  }
  return all_to_all_cost(topo_, traffic_);
}

GraphCollectives::GraphCollectives(std::shared_ptr<const NetworkGraph> graph, int gpu_offset, int gpus)
    : graph_(std::move(graph)), coster_(*graph_), gpu_offset_(gpu_offset) {
  matrix_.setZero(gpus, gpus);
}

CollectiveCost GraphCollectives::ep_exchange(const EpTraffic& t, double token_bytes) {
  if (t.pair_matrix != nullptr) {
    matrix_ = *t.pair_matrix * token_bytes;
    return coster_.cost(matrix_, gpu_offset_);
  }
  return all_to_all_separable(*t.share, *t.pairs, token_bytes);
}

CollectiveCost GraphCollectives::all_to_all(const Eigen::MatrixXd& bytes) {
  return coster_.cost(bytes, gpu_offset_);
}

CollectiveCost GraphCollectives::all_to_all_separable(const Eigen::ArrayXd& share, const Eigen::ArrayXd& pairs,
                                                      double pair_bytes) {
  matrix_.noalias() = (share * pair_bytes).matrix() * pairs.matrix().transpose();
  return coster_.cost(matrix_, gpu_offset_);
}

CollectiveCost GraphCollectives::all_gather(const Eigen::ArrayXd& bytes) {
  matrix_.colwise() = bytes.matrix();  // row s: GPU s's bytes to every GPU
  return coster_.cost(matrix_, gpu_offset_);
}

namespace {

// Measured corrections of another model ([calibration] of an experiment): every EP exchange and
// all-to-all costs the model's time times the measured all_to_all rows' measured / modelled ratio at that
// time, every tensor-parallel all-reduce the same with the all_reduce rows' (a missing curve: the model
// alone). All-gathers (weight migrations) are not what the rows measured.
class MeasuredCollectives final : public CollectiveModel {
 public:
  MeasuredCollectives(std::unique_ptr<CollectiveModel> model, std::shared_ptr<const MeasuredCurve> exchange,
                      std::shared_ptr<const MeasuredCurve> all_reduce)
      : model_(std::move(model)), exchange_(std::move(exchange)), all_reduce_(std::move(all_reduce)) {}
  CollectiveCost ep_exchange(const EpTraffic& traffic, double token_bytes) override {
    return corrected(model_->ep_exchange(traffic, token_bytes));
  }
  CollectiveCost all_to_all(const Eigen::MatrixXd& bytes) override { return corrected(model_->all_to_all(bytes)); }
  CollectiveCost all_to_all_separable(const Eigen::ArrayXd& share, const Eigen::ArrayXd& pairs,
                                      double pair_bytes) override {
    return corrected(model_->all_to_all_separable(share, pairs, pair_bytes));
  }
  CollectiveCost all_gather(const Eigen::ArrayXd& bytes) override { return model_->all_gather(bytes); }
  double tp_all_reduce_ns(const LinkSpec& intra, int gpus, double bytes) const override {
    const double ns = model_->tp_all_reduce_ns(intra, gpus, bytes);
    return all_reduce_ && ns > 0.0 ? ns * all_reduce_->ratio(ns) : ns;
  }

 private:
  CollectiveCost corrected(CollectiveCost c) const {
    if (exchange_ && c.time_ns > 0.0) {
      c.time_ns *= exchange_->ratio(c.time_ns);
    }
    return c;
  }
  std::unique_ptr<CollectiveModel> model_;
  std::shared_ptr<const MeasuredCurve> exchange_;
  std::shared_ptr<const MeasuredCurve> all_reduce_;
};

std::unique_ptr<CollectiveModel> modelled(const CollectiveConfig& cfg, const Topology& group,
                                          std::shared_ptr<const NetworkGraph> graph, int gpu_offset,
                                          const EpCommConfig& comm) {
  if (comm.algorithm == DispatchAlgorithm::deepep_normal) {
    return std::make_unique<DeepEpNormal>(group, comm);
  }
  if (comm.algorithm == DispatchAlgorithm::deepep_low_latency) {
    return std::make_unique<DeepEpLowLatency>(group, comm);
  }
  if (comm.algorithm == DispatchAlgorithm::deepep_auto) {
    return std::make_unique<DeepEpAuto>(group, comm);
  }
  if (!cfg.uses_graph(group.num_gpus())) {
    return std::make_unique<PortCollectives>(group);
  }
  if (!graph) {
    throw core::Error("the graph collective model needs the network graph");
  }
  return std::make_unique<GraphCollectives>(std::move(graph), gpu_offset, group.num_gpus());
}

}  // namespace

std::unique_ptr<CollectiveModel> make_collective_model(const CollectiveConfig& cfg, const Topology& group,
                                                       std::shared_ptr<const NetworkGraph> graph, int gpu_offset,
                                                       const EpCommConfig& comm) {
  std::unique_ptr<CollectiveModel> m = modelled(cfg, group, std::move(graph), gpu_offset, comm);
  const auto usable = [](const std::shared_ptr<const MeasuredCurve>& c) { return c && !c->empty() ? c : nullptr; };
  if (usable(cfg.exchange_curve) || usable(cfg.all_reduce_curve)) {
    return std::make_unique<MeasuredCollectives>(std::move(m), usable(cfg.exchange_curve),
                                                 usable(cfg.all_reduce_curve));
  }
  return m;
}

}  // namespace epsim::hardware
