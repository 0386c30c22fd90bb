// SPDX-License-Identifier: Apache-2.0
#pragma once
// GRACE-MoE's routing (paper 004, Section 4.3 and Algorithms 3-4): topology-aware with locality
// preference. A token whose origin GPU holds a replica of its expert stays there; otherwise it goes to
// a replica on its origin's node; only when the node has none, to any replica. Within a tier the GPU is
// drawn by weighted round-robin with load prediction: weights inversely proportional to the GPUs'
// predicted post-replication loads (Eq. 3).
//
// What the paper leaves open, as done here (docs/policies.md):
// - The router sees no profile, so Eq. 3's pre-replication statistics are the step's own: W_i = tokens
//   of the experts whose primary (replica rank 0) is on GPU i. For each GPU h holding primaries of
//   replicated experts: W_r = their tokens, n = their most secondary copies, W_p = replica_share(W_h,
//   W_r, n), W'_h = W_h - W_r + W_p, and + W_p once on every GPU holding a copy of one of them. With
//   GRACE's placement (one replicated group per layer) this is exactly Eq. 3.
// - Weight of GPU g = 1 / max(W'_g, 1): a GPU predicted idle counts as one token, not infinitely light.
// - choice = random (Algorithm 3's WeightedRandomChoice per token, drawn as a multinomial by successive
//   binomials from a core::Rng seeded by `seed`) or proportional (the expectation of that draw,
//   largest-remainder split; ties to the lower GPU).
// - Unknown origins (StepLayerLoad::origin_tokens empty): an expert's tokens spread evenly over the
//   EP group's GPUs, remainder to GPUs e, e + 1, ... (mod G) so no GPU is always favoured.
// - Several replicas of one expert on one GPU (not GRACE's, but other placements): the lowest slot.
// - gpus_per_node 0 (unknown): the whole group is one node.
// Buffers are sized on the first call and reused: route() does not allocate afterwards.
#include <cstdint>
#include <span>
#include <vector>

#include "core/params.hpp"
#include "core/random_streams.hpp"
#include "policies/grace/grace_replication.hpp"
#include "policies/routing_policy.hpp"

namespace epsim::policies {

struct GraceRoutingConfig {
  enum class Choice : std::uint8_t { random, proportional };
  Choice choice = Choice::random;
  ReplicaShare share = ReplicaShare::paper;
  std::uint64_t seed = 1;  ///< of the random choice
};

class GraceRouting final : public RoutingPolicy {
 public:
  explicit GraceRouting(GraceRoutingConfig cfg = {}) : cfg_(cfg), rng_(cfg.seed) {}
  void route(const StepLayerLoad& load, const LayerPlacement& placement, RoutedLoad& out) override;
  PolicyNeeds needs() const override { return {.origins = true}; }
  const GraceRoutingConfig& config() const { return cfg_; }
  /// Eq. 3's predicted load per GPU of the last route() call.
  std::span<const double> predicted_load() const { return predicted_; }

 private:
  void predict(std::span<const std::int32_t> expert_tokens, const LayerPlacement& placement);
  // Splits `tokens` of origin `origin` over candidates_ by their weights into their slots (gpu_slot_),
  // counting them in out.origin_gpu_tokens.
  void split(std::int32_t tokens, int origin, RoutedLoad& out);

  GraceRoutingConfig cfg_;
  core::Rng rng_;
  std::vector<double> predicted_;    // per GPU
  std::vector<double> replicated_;   // W_r per primary GPU
  std::vector<double> unit_share_;   // W_p per primary GPU
  std::vector<int> copies_;          // n per primary GPU
  std::vector<char> hosts_;          // [primary GPU][GPU]: holds a copy of one of its replicated experts
  std::vector<int> gpu_slot_;        // per GPU: lowest slot of the current expert there, -1 = none
  std::vector<int> candidates_;      // GPUs of the current tier
  std::vector<double> weights_;      // their weights
  std::vector<std::int32_t> share_;  // their tokens (proportional choice)
  std::vector<double> quota_;        // their exact shares (proportional choice)
};

/// Reads `choice` ("random" | "proportional"), `share` ("paper" | "conserving") and `seed`.
GraceRoutingConfig parse_grace_routing_config(core::ParamTable& t);

}  // namespace epsim::policies
