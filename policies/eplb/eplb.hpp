// SPDX-License-Identifier: Apache-2.0
#pragma once
// DeepSeek's Expert Parallelism Load Balancer (github deepseek-ai/EPLB, eplb.py), output for output:
// rebalance_experts(weight[L][E], num_replicas R, num_groups G, num_nodes N, num_gpus P) returns
// phy2log[L][R] (slot s lives on GPU s / (R / P)), log2phy[L][E][maxcnt] (-1 padded to the largest
// replica count over all layers) and logcnt[L][E]. Hierarchical when G % N == 0, else the same procedure
// with one group and one node. Weights are compared as 32-bit floats, as the reference does.
//
// The distinct variant (not in the reference) never puts two replicas of an expert on one GPU, for engines
// that map expert -> slot per device (vllm-ascend): an expert gets at most one replica per GPU of its node,
// and the packing onto GPUs skips a GPU that already holds the expert. It costs balance only where the
// reference would co-locate replicas.
#include <cstdint>
#include <vector>

namespace epsim::policies::eplb {

/// balanced_packing: items of weight w go to `packs` packs of equal item count. If each pack takes one
/// item, item i goes to pack i. Otherwise items in descending weight order (ties: lower index first)
/// each go to the lightest pack that is not full (ties: lowest pack index). Outputs per item.
void balanced_packing(const std::vector<float>& w, int packs, std::vector<int>& pack, std::vector<int>& rank);

/// replicate_experts: slots 0..m-1 hold experts 0..m-1; each further slot goes to the expert with the
/// largest w / count (ties: lowest index). Outputs phy2log, replica rank per slot, and counts.
/// With `max_count`, only experts of fewer replicas than it receive one (the distinct variant).
void replicate_experts(const std::vector<float>& w, int num_phy, std::vector<int>& phy2log, std::vector<int>& rank,
                       std::vector<int>& count, int max_count = 0);

/// balanced_packing with item i a replica of expert `expert[i]`: no pack takes two items of one expert.
/// Items in descending weight order each go to the lightest pack that is not full and does not hold the
/// item's expert; when every such pack is full, an item of a lighter pack that may move to a pack with room
/// makes way. Needs at most `packs` items per expert; throws core::Error when no arrangement is found.
void distinct_packing(const std::vector<float>& w, const std::vector<int>& expert, int packs, std::vector<int>& pack,
                      std::vector<int>& rank);

struct Result {
  int layers = 0;
  int experts = 0;
  int replicas = 0;
  int max_count = 0;
  std::vector<int> phy2log;  ///< [layer][replica]
  std::vector<int> log2phy;  ///< [layer][expert][max_count], -1 padded
  std::vector<int> logcnt;   ///< [layer][expert]
  std::vector<int> phyrank;  ///< [layer][replica]: replica rank of each slot
};

/// The reference's rebalance_experts. `weight` is [layers][experts] row-major. Throws core::Error naming
/// the violated precondition (E % G, G % N for the hierarchical policy, P % N, R % P, R >= E).
/// `distinct`: the distinct variant (at most one replica of an expert per GPU); needs at most
/// experts / nodes slots per GPU.
Result rebalance_experts(const std::vector<double>& weight, int layers, int experts, int num_replicas, int num_groups,
                         int num_nodes, int num_gpus, bool distinct = false);

}  // namespace epsim::policies::eplb
