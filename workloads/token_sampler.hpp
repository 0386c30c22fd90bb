// SPDX-License-Identifier: Apache-2.0
#pragma once
// Draws single tokens' top-k expert sets from per-expert probabilities, honouring group-limited routing
// (DeepSeek-V3: experts in `groups` contiguous groups, a token's experts from at most `topk_group` of
// them). A token first picks topk_group distinct groups, each with probability proportional to the mass
// it has left, then top_k distinct experts among those groups' experts, each pick proportional to its
// probability (rejection of repeats). The counts a step routes come from the multinomial of the router;
// these sets say how a token's experts spread over nodes and GPUs (the dispatch's fan-out).
#include <cstdint>
#include <span>
#include <vector>

#include "core/random_streams.hpp"

namespace epsim::workloads {

class TokenSampler {
 public:
  TokenSampler(int experts, int top_k, int groups, int topk_group);
  /// Probabilities per expert (any non-negative weights; normalised here).
  void set_weights(std::span<const double> weights);
  /// One token's top_k distinct expert ids into `out` (size top_k), within at most topk_group groups.
  void draw(core::Rng& rng, std::span<std::int32_t> out);
  int top_k() const { return top_k_; }
  int group_of(int expert) const { return expert / group_size_; }

 private:
  int top_k_, groups_, topk_group_, group_size_;
  std::vector<double> cdf_;         // [expert] cumulative weight inside its group (group-local prefix)
  std::vector<double> group_mass_;  // [group]
  std::vector<int> picked_groups_;  // this token's groups
  std::vector<char> group_taken_;   // [group] picked for this token (no search of picked_groups_)
  std::vector<double> picked_mass_;
  std::vector<char> taken_;  // [expert] already drawn for this token
};

}  // namespace epsim::workloads
