#pragma once
// Where the per-step expert loads come from: a synthetic generator or (later) a replayed trace. The
// serving engine asks, for each MoE layer of a step, how the step's tokens pick their experts.
#include <cstdint>
#include <span>

namespace epsim::workloads {

class RoutingSource {
 public:
  virtual ~RoutingSource() = default;
  virtual int num_moe_layers() const = 0;
  virtual int num_experts() const = 0;
  virtual int top_k() const = 0;
  /// Fills `tokens_per_expert` (size num_experts) with the token-expert assignments of `tokens` tokens
  /// in MoE layer `layer` (0-based among MoE layers) for the current step; counts sum to tokens * top_k
  /// and none exceeds `tokens` (a token picks distinct experts).
  virtual void sample(int layer, std::int64_t tokens, std::span<std::int32_t> tokens_per_expert) = 0;
};

}  // namespace epsim::workloads
