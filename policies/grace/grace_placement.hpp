// SPDX-License-Identifier: Apache-2.0
#pragma once
// GRACE-MoE's placement (paper 004, Sections 4.1-4.2): per layer, the affinity of PlacementInput::
// coactivation (affinity.hpp); node level: spectral clustering into num_nodes fully non-uniform groups,
// held to the node's slots (gpus_per_node x slots_per_gpu) by Algorithm 2's overflow step; GPU level:
// within each node, Algorithm 2 into gpus_per_node groups, r at the knee of (S(r), U(r)), group sizes
// also held to slots_per_gpu (spectral_grouping.hpp); then dynamic replication of the heaviest group's
// hot experts into free slots (grace_replication.hpp). Primaries take the first slots of their GPU in
// expert order with replica rank 0, copies follow with ranks 1.. in creation order; other slots -1.
#include <cstdint>
#include <vector>

#include "policies/grace/grace_replication.hpp"
#include "policies/grace/spectral_grouping.hpp"
#include "policies/placement_policy.hpp"

namespace epsim::policies {

struct GraceConfig {
  bool replication = true;  ///< dynamic replication on (the paper) or off (grouping only, "HG")
  /// Candidate non-uniformity ratios r of the GPU level, scored at the knee of (S(r), U(r)).
  std::vector<double> ratios{0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};
  int kmeans_restarts = 10;
  int kmeans_iterations = 300;
  ReplicaShare share = ReplicaShare::paper;  ///< for the Eq. 3 prediction in the report
};

/// What GRACE decided for one layer (for reports: r per node, the replication plan).
struct GraceLayerReport {
  std::vector<int> node_of_expert;  ///< node-level group of each expert
  std::vector<int> gpu_of_expert;   ///< GPU of each expert's primary
  std::vector<double> node_ratio;   ///< r chosen at the knee, per node
  ReplicationPlan replication;      ///< empty (n_replica 0) when replication is off
};

/// The grouping and replication of one layer. `expert_load` may be empty when replication is off.
/// `seed` seeds the k-means++ of the layer (node level: stream 0, node n's GPU level: stream n + 1).
GraceLayerReport grace_layer(const Eigen::MatrixXd& affinity, std::span<const double> expert_load, int num_nodes,
                             int gpus_per_node, int slots_per_gpu, const GraceConfig& cfg, std::uint64_t seed);

/// phy2log and replica ranks of a layer report (gpu-major, primaries first, -1 = empty).
LayerPlacement grace_layer_placement(const GraceLayerReport& r, int num_experts, int num_gpus, int slots_per_gpu);

class GracePlacement final : public PlacementPolicy {
 public:
  explicit GracePlacement(GraceConfig cfg = {}) : cfg_(std::move(cfg)) {}
  Placement place(const PlacementInput& in) override;
  PolicyNeeds needs() const override { return {.load_window = cfg_.replication, .coactivation = true}; }
  const GraceConfig& config() const { return cfg_; }
  /// Per layer, what the last place() decided.
  const std::vector<GraceLayerReport>& last_report() const { return report_; }

 private:
  GraceConfig cfg_;
  std::vector<GraceLayerReport> report_;
};

}  // namespace epsim::policies
