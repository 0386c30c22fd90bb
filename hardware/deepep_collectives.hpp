// SPDX-License-Identifier: Apache-2.0
#pragma once
// DeepEP's two kernel families as collective models (ep_comm.hpp describes them; docs/model.md derives
// the bytes). Both cost per GPU port like PortCollectives, with their own startup; collectives other
// than the EP exchange (metro's all-gather) go through NCCL's port model.
#include "hardware/collective_model.hpp"

namespace epsim::hardware {

/// DeepEP's models share this: everything but the EP exchange goes through NCCL's port model.
class DeepEpBase : public CollectiveModel {
 public:
  explicit DeepEpBase(const Topology& group) : nccl_(group) {}
  CollectiveCost all_to_all(const Eigen::MatrixXd& bytes) override { return nccl_.all_to_all(bytes); }
  CollectiveCost all_to_all_separable(const Eigen::ArrayXd& share, const Eigen::ArrayXd& pairs,
                                      double pair_bytes) override {
    return nccl_.all_to_all_separable(share, pairs, pair_bytes);
  }
  CollectiveCost all_gather(const Eigen::ArrayXd& bytes) override { return nccl_.all_gather(bytes); }

 private:
  PortCollectives nccl_;
};

/// Normal (throughput) mode. Per layer and direction, with D_n distinct tokens reaching node n and D_g
/// reaching GPU g, origin o (node m, rail r) sends share_o x D_n tokens over RDMA to GPU (n, r) of every
/// other node n; GPU f = (n, r) holds the tokens of rail r's origins (a_r = their share) and forwards
/// a_r x D_g of them over NVLink to every other GPU g of its node. RDMA and NVLink (each at the share of
/// its rate the kernels reach: rdma_efficiency, nvlink_efficiency) and the SMs' channels (comm_sms x
/// sm_gbps of sends per GPU) pipeline: the slowest of the three sets the time.
class DeepEpNormal final : public DeepEpBase {
 public:
  DeepEpNormal(const Topology& group, const EpCommConfig& comm);
  CollectiveCost ep_exchange(const EpTraffic& traffic, double token_bytes) override;
  /// The flows once, priced at both token sizes (the traffic is linear in the bytes; the cost is not).
  ExchangePair ep_exchange_pair(const EpTraffic& traffic, double dispatch_bytes, double combine_bytes) override;
  /// The last exchange's per-GPU traffic (tests, observability; after a pair, the dispatch's).
  const PerGpuTraffic& traffic() const { return traffic_; }

 private:
  // Per-GPU token copies (not bytes) of `t` into traffic_.
  void flows(const EpTraffic& t);
  void separable(const EpTraffic& t);
  void per_origin(const EpTraffic& t);
  // The cost of traffic_ (in bytes).
  CollectiveCost priced() const;

  Topology topo_;
  double alpha_ns_;
  double sm_cap_gbps_;                                                      // 0 = no SM limit
  PerGpuTraffic traffic_, unit_;                                            // unit_: a pair's flows in token copies
  Eigen::ArrayXd node_tokens_, rail_share_, gpu_tokens_, node_gpu_tokens_;  // D_n, a_r, D_g, sum of D_g over n
};

/// Low-latency mode: every token-expert pair is one message to the expert's GPU (RDMA across nodes,
/// NVLink inside); a GPU's time is its port time plus message_ns per message it sends.
class DeepEpLowLatency final : public DeepEpBase {
 public:
  DeepEpLowLatency(const Topology& group, const EpCommConfig& comm);
  CollectiveCost ep_exchange(const EpTraffic& traffic, double token_bytes) override;

 private:
  Topology topo_;
  double alpha_ns_;
  double message_ns_;
  PerGpuTraffic traffic_;
  Eigen::ArrayXd messages_, node_a_, node_b_;  // node_*: separable_traffic's workspaces
};

/// SGLang's auto mode: normal kernels for a step that prefills, low-latency kernels for a decode-only
/// step, each with its family's fitted startup (and the configured datatypes and SMs).
class DeepEpAuto final : public DeepEpBase {
 public:
  DeepEpAuto(const Topology& group, const EpCommConfig& comm);
  CollectiveCost ep_exchange(const EpTraffic& traffic, double token_bytes) override {
    return traffic.step_prefills ? normal_.ep_exchange(traffic, token_bytes) : low_.ep_exchange(traffic, token_bytes);
  }
  ExchangePair ep_exchange_pair(const EpTraffic& traffic, double dispatch_bytes, double combine_bytes) override {
    return traffic.step_prefills ? normal_.ep_exchange_pair(traffic, dispatch_bytes, combine_bytes)
                                 : low_.ep_exchange_pair(traffic, dispatch_bytes, combine_bytes);
  }

 private:
  DeepEpNormal normal_;
  DeepEpLowLatency low_;
};

}  // namespace epsim::hardware
