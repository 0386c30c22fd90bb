#pragma once
// Synthetic routing: per MoE layer, a Zipf-like popularity p_e ~ 1 / rank_e^s over a layer-specific
// random ranking of the experts (so every layer has its own hot set). Probabilities are capped at
// 1 / top_k by water-filling, because a token picks top_k *distinct* experts and so no expert can take
// more than all tokens. A step's token-expert counts are one multinomial draw of tokens * top_k picks.
#include <vector>

#include "sim/core/params.hpp"
#include "sim/core/random_streams.hpp"
#include "workloads/routing_source.hpp"

namespace epsim::workloads {

struct SyntheticRouterConfig {
  double zipf_exponent = 0.8;  ///< s in p ~ 1 / rank^s (0 = uniform)
};

SyntheticRouterConfig parse_synthetic_router(core::ParamTable& t);

/// Zipf weights 1 / rank^s for ranks 1..n, capped at 1 / top_k after normalisation (water-filling).
std::vector<double> capped_zipf_probabilities(int n, double exponent, int top_k);

class SyntheticRouter final : public RoutingSource {
 public:
  SyntheticRouter(const SyntheticRouterConfig& cfg, int moe_layers, int experts, int top_k,
                  const core::RandomStreams& streams);
  int num_moe_layers() const override { return layers_; }
  int num_experts() const override { return experts_; }
  int top_k() const override { return top_k_; }
  void sample(int layer, std::int64_t tokens, std::span<std::int32_t> tokens_per_expert) override;

  /// Expert ids of `layer` from most to least popular, and their probabilities in that order.
  std::span<const int> ranking(int layer) const;
  std::span<const double> sorted_probabilities() const { return sorted_p_; }

 private:
  int layers_;
  int experts_;
  int top_k_;
  std::vector<double> sorted_p_;   // probabilities by rank (same for every layer)
  std::vector<double> tail_mass_;  // tail_mass_[r] = sum of sorted_p_[r..]
  std::vector<int> ranking_;       // [layer][rank] -> expert
  core::Rng rng_;
};

}  // namespace epsim::workloads
