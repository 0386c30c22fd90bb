// SPDX-License-Identifier: Apache-2.0
#pragma once
// metro ("Efficient MoE Serving in the Memory-Bound Regime: Balance Activated Experts, Not Tokens",
// Section IV): in the memory-bound decode phase a GPU's expert time follows the experts it activates,
// not its tokens, so metro sends all of an expert's tokens to one replica (Lemma 1) and picks the
// replicas to minimise the largest number of activated experts on a GPU. Greedy (the paper's
// Algorithm 1, in a fixed order, docs/policies.md) or exact (MinActivatedExact). Its dispatch is an
// all-gather (every GPU needs the global top-k), so a routed step sets RoutedLoad::all_gather_dispatch.
// Steps it does not route (by default those with prefill tokens) are split evenly, as the paper does.
#include <cstdint>
#include <span>
#include <vector>

#include "core/params.hpp"
#include "policies/even_routing.hpp"
#include "policies/metro/min_activated_exact.hpp"
#include "policies/routing_policy.hpp"

namespace epsim::policies {

struct MetroConfig {
  enum class Mode : std::uint8_t { greedy, exact };
  enum class Phases : std::uint8_t { decode, all };
  Mode mode = Mode::greedy;        ///< exact: optimal replica choice by max flow (slow; to measure the gap)
  Phases phases = Phases::decode;  ///< decode: only decode-only steps; the others are split evenly
};

/// Reads `mode` ("greedy" | "exact") and `phases` ("decode" | "all").
MetroConfig parse_metro_config(core::ParamTable& t);

class MetroRouting final : public RoutingPolicy {
 public:
  explicit MetroRouting(MetroConfig cfg = {}) : cfg_(cfg) {}
  void route(const StepLayerLoad& load, const LayerPlacement& placement, RoutedLoad& out) override;
  const MetroConfig& config() const { return cfg_; }

 private:
  // Greedy choice into `slot_tokens`; returns the max activated experts per GPU.
  int route_greedy(std::span<const std::int32_t> expert_tokens, const LayerPlacement& placement,
                   std::span<std::int32_t> slot_tokens);
  void route_exact(std::span<const std::int32_t> expert_tokens, const LayerPlacement& placement,
                   std::span<std::int32_t> slot_tokens);
  // Puts all `tokens` of an expert on `slot` and counts it on the slot's GPU.
  void assign(const LayerPlacement& placement, int slot, std::int32_t tokens, std::span<std::int32_t> slot_tokens);

  MetroConfig cfg_;
  EvenRouting even_;
  MinActivatedExact exact_;
  std::vector<std::int32_t> gpu_activated_;  // per GPU, sized on first use, reused
  std::vector<std::int64_t> gpu_tokens_;
  std::vector<int> replicated_;  // experts with tokens and replicas on several GPUs, ascending
};

/// Largest number of activated experts (slots with tokens) on one GPU.
int max_activated_per_gpu(const LayerPlacement& placement, std::span<const std::int32_t> slot_tokens);

}  // namespace epsim::policies
