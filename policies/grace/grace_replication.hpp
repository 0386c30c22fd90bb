// SPDX-License-Identifier: Apache-2.0
#pragma once
// GRACE-MoE's dynamic replication (paper 004, Section 4.2) and its load prediction (Section 4.3, Eq. 3).
// Per layer, after grouping (one group per GPU): group loads W_i, skew rho = W_max / mean(W), replica
// count n = min(max(1, floor(rho)), n_gpu - 1) (Eq. 2); the heaviest group's experts ranked by load,
// the hot ones being the shortest prefix whose cumulative load exceeds W_max n / (1 + n); each hot
// expert gets one secondary copy on each of the n most under-used GPUs (least W_i, ties: lower id) that
// have a free slot. Primaries stay, so the grouping is intact. A hot expert that no longer fits on a
// target is not copied there (counted in `dropped`): the paper has no slot limit, epsim's GPUs do.
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace epsim::policies {

/// Eq. 2: min(max(1, floor(rho)), num_gpus - 1); 0 with a single GPU. Throws on rho < 0 or no GPU.
int replica_count(double rho, int num_gpus);

/// The hot experts of `group`: by load descending (ties: lower id), the shortest prefix whose cumulative
/// load exceeds W_max n / (1 + n), W_max = the group's load. Empty when n < 1 or the group has no load.
std::vector<int> hot_experts(std::span<const int> group, std::span<const double> expert_load, int n_replica);

/// How Eq. 3 splits the replicated load. paper: W_p = W_max / (n + 1), as printed; conserving:
/// W_p = W_r / (n + 1), the even split of the replicated experts' load W_r, which keeps the total.
enum class ReplicaShare : std::uint8_t { paper, conserving };
/// W_p of Eq. 3.
double replica_share(double w_max, double w_r, int n_replica, ReplicaShare share);

struct ReplicationPlan {
  std::vector<double> gpu_load;               ///< W_i before replication, per GPU
  double rho = 0.0;                           ///< W_max / mean (0 when there is no load)
  int n_replica = 0;                          ///< Eq. 2 (0 when there is no load or one GPU)
  int heaviest_gpu = -1;                      ///< the GPU of the heaviest group (lowest id on ties)
  std::vector<int> hot;                       ///< hot experts, load descending
  std::vector<int> targets;                   ///< the replica GPUs, least loaded first
  std::vector<std::pair<int, int>> replicas;  ///< (expert, gpu) secondary copies, in creation order
  int dropped = 0;                            ///< copies that found no free slot on their target
  double replicated_load = 0.0;               ///< W_r: load of the hot experts that got a copy
  std::vector<double> predicted_load;         ///< Eq. 3 per GPU (the other GPUs keep W_i)
};

/// The plan for one layer: `gpu_groups[g]` = the experts grouped onto GPU g (their primaries),
/// `expert_load` per expert, `slots_per_gpu` bounds each GPU's primaries plus copies. Throws core::Error
/// on a group over the slot limit, an expert out of range or a negative load.
ReplicationPlan plan_replication(const std::vector<std::vector<int>>& gpu_groups, std::span<const double> expert_load,
                                 int slots_per_gpu, ReplicaShare share = ReplicaShare::paper);

}  // namespace epsim::policies
