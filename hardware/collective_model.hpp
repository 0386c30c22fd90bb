// SPDX-License-Identifier: Apache-2.0
#pragma once
// How one EP group's collectives are costed, chosen once when the simulation is built
// (make_collective_model). The step executor describes each collective's traffic and never asks which
// model it has: the port model (all_to_all.hpp) aggregates the traffic per GPU port, the graph model
// (collectives.hpp) routes every flow over the network graph; both move every token-expert pair (NCCL's
// all-to-all). DeepEP's kernels (deepep_collectives.hpp) move fewer bytes by deduplicating tokens per
// node and GPU. A new communication model is one more implementation here.
#include <Eigen/Core>
#include <memory>

#include "hardware/all_to_all.hpp"
#include "hardware/collectives.hpp"
#include "hardware/ep_comm.hpp"
#include "hardware/hardware_config.hpp"
#include "hardware/nccl_all_reduce.hpp"
#include "hardware/network_graph.hpp"
#include "hardware/topology.hpp"

namespace epsim::hardware {

/// One EP dispatch (a combine is the same flows reversed) of a layer, as the step executor knows it.
/// Arrays are per GPU of the group (fan-outs per node); the caller owns them.
struct EpTraffic {
  const Eigen::ArrayXd* share = nullptr;  ///< each origin GPU's share of the step's tokens
  const Eigen::ArrayXd* pairs = nullptr;  ///< token-expert pairs each GPU receives
  /// origin x GPU token-expert pairs when the routing knows origins (null: origins send share x pairs).
  const Eigen::MatrixXd* pair_matrix = nullptr;
  /// Distinct tokens per pair a GPU receives (<= 1: a token with two experts there arrives once) and the
  /// same per node; null = 1 (no deduplication). Only the models that deduplicate read them.
  const Eigen::ArrayXd* gpu_fanout = nullptr;
  const Eigen::ArrayXd* node_fanout = nullptr;
  bool step_prefills = true;  ///< the step has prefill tokens (DeepEP's auto mode picks its kernels by it)
};

class CollectiveModel {
 public:
  virtual ~CollectiveModel() = default;
  /// Dispatch (or combine) of `traffic` with `token_bytes` per token copy on the wire.
  virtual CollectiveCost ep_exchange(const EpTraffic& traffic, double token_bytes) = 0;
  /// A layer's dispatch and combine: the same flows (reversed) at two token sizes. Models whose cost is
  /// linear in the bytes price the flows once.
  struct ExchangePair {
    CollectiveCost dispatch;
    CollectiveCost combine;
  };
  virtual ExchangePair ep_exchange_pair(const EpTraffic& traffic, double dispatch_bytes, double combine_bytes) {
    ExchangePair p;
    p.combine = ep_exchange(traffic, combine_bytes);
    // ep_exchange is a function of its arguments: the same flows at the same size cost the same.
    p.dispatch = dispatch_bytes == combine_bytes ? p.combine : ep_exchange(traffic, dispatch_bytes);
    return p;
  }
  /// All-to-all of a full traffic matrix: bytes(s, d) from the group's GPU s to its GPU d (diagonal
  /// ignored). `bytes` is gpus x gpus.
  virtual CollectiveCost all_to_all(const Eigen::MatrixXd& bytes) = 0;
  /// All-to-all in which every GPU sends the same mix: bytes(s, d) = share(s) x pairs(d) x pair_bytes
  /// (GPU s holds a share(s) fraction of every expert's tokens; GPU d receives pairs(d) token copies).
  virtual CollectiveCost all_to_all_separable(const Eigen::ArrayXd& share, const Eigen::ArrayXd& pairs,
                                              double pair_bytes) = 0;
  /// All-gather: GPU s sends bytes(s) to every other GPU of the group.
  virtual CollectiveCost all_gather(const Eigen::ArrayXd& bytes) = 0;
  /// A tensor-parallel all-reduce of `bytes` per GPU over `gpus` GPUs of one node on the port view's
  /// scale-up link `intra` (nccl_all_reduce.hpp: the algorithm and protocol NCCL picks), ns.
  virtual double tp_all_reduce_ns(const LinkSpec& intra, int gpus, double bytes) const {
    return intra_node_all_reduce_ns(intra, gpus, bytes);
  }
};

/// Per-GPU ports (all_to_all.hpp): each GPU's intra- and inter-node sends and receives serialise on its
/// own port; exact in bandwidth on switch and rail fabrics, blind to meshes and oversubscription.
class PortCollectives final : public CollectiveModel {
 public:
  explicit PortCollectives(const Topology& group);
  CollectiveCost ep_exchange(const EpTraffic& traffic, double token_bytes) override;
  ExchangePair ep_exchange_pair(const EpTraffic& traffic, double dispatch_bytes, double combine_bytes) override;
  CollectiveCost all_to_all(const Eigen::MatrixXd& bytes) override;
  CollectiveCost all_to_all_separable(const Eigen::ArrayXd& share, const Eigen::ArrayXd& pairs,
                                      double pair_bytes) override;
  CollectiveCost all_gather(const Eigen::ArrayXd& bytes) override;

 private:
  Topology topo_;
  PerGpuTraffic traffic_;
  Eigen::ArrayXd node_a_, node_b_;  // per-node workspaces
};

/// Every flow over its route on the network graph (collectives.hpp); the group's GPUs start at
/// `gpu_offset` in the graph's numbering.
class GraphCollectives final : public CollectiveModel {
 public:
  GraphCollectives(std::shared_ptr<const NetworkGraph> graph, int gpu_offset, int gpus);
  CollectiveCost ep_exchange(const EpTraffic& traffic, double token_bytes) override;
  CollectiveCost all_to_all(const Eigen::MatrixXd& bytes) override;
  CollectiveCost all_to_all_separable(const Eigen::ArrayXd& share, const Eigen::ArrayXd& pairs,
                                      double pair_bytes) override;
  CollectiveCost all_gather(const Eigen::ArrayXd& bytes) override;

 private:
  std::shared_ptr<const NetworkGraph> graph_;
  CollectiveCoster coster_;
  int gpu_offset_;
  Eigen::MatrixXd matrix_;  // workspace: never allocated per call
};

/// The model `cfg` and `comm` pick for an EP group laid out as `group`, whose GPUs start at `gpu_offset`;
/// `graph` may be null only when the graph is not picked (DeepEP's algorithms always use ports: their
/// kernels are rail-aligned by construction).
std::unique_ptr<CollectiveModel> make_collective_model(const CollectiveConfig& cfg, const Topology& group,
                                                       std::shared_ptr<const NetworkGraph> graph, int gpu_offset,
                                                       const EpCommConfig& comm = {});

}  // namespace epsim::hardware
