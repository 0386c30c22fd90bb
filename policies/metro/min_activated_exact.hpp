// SPDX-License-Identifier: Apache-2.0
#pragma once
// The exact min-exp-routing of metro ("Balance Activated Experts, Not Tokens", Section IV-B): choose
// one replica for every expert with tokens (Lemma 1: splitting an expert never lowers the objective) so
// that the largest number of activated experts on a GPU is minimal. Binary search on that maximum K; K
// is feasible iff the flow network source -(1)-> active expert -(1)-> GPU holding one of its replicas
// -(K)-> sink carries one unit per active expert (a capacitated bipartite matching), solved by Boost
// Graph's push-relabel max flow. Too slow for the step loop by design (the paper's point); it checks
// metro's greedy and measures its gap. Not thread-safe: it keeps the flow networks between calls.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "policies/placement.hpp"

namespace epsim::policies {

class MinActivatedExact {
 public:
  MinActivatedExact();
  ~MinActivatedExact();
  MinActivatedExact(MinActivatedExact&&) noexcept;
  MinActivatedExact& operator=(MinActivatedExact&&) noexcept;
  MinActivatedExact(const MinActivatedExact&) = delete;
  MinActivatedExact& operator=(const MinActivatedExact&) = delete;

  /// The minimal max activated experts per GPU for `expert_tokens` on `placement`. `upper_bound`: a
  /// value known to be feasible (metro passes its greedy's), or -1 for the trivial one (all active
  /// experts). Afterwards expert_slot() holds an optimal choice. Throws core::Error if `upper_bound` is
  /// not feasible.
  int solve(std::span<const std::int32_t> expert_tokens, const LayerPlacement& placement, int upper_bound = -1);
  /// The last solve's chosen physical slot per expert (the lowest slot of the chosen GPU), -1 for
  /// experts without tokens.
  std::span<const int> expert_slot() const { return expert_slot_; }
  /// Max flows (feasibility tests) the last solve ran.
  int probes() const { return probes_; }

 private:
  struct Network;  // one placement's flow network (keeps Boost Graph out of this header)
  Network& network_for(const LayerPlacement& placement);
  bool feasible(Network& net, std::span<const std::int32_t> expert_tokens, int active, int max_activated);
  void take_assignment(const Network& net, std::span<const std::int32_t> expert_tokens,
                       const LayerPlacement& placement);

  // One network per placement seen (a model's MoE layers each have their own), rebuilt when its
  // phy2log changes.
  std::vector<std::unique_ptr<Network>> networks_;
  std::vector<int> expert_slot_;
  std::vector<int> forced_per_gpu_;
  int probes_ = 0;
};

}  // namespace epsim::policies
