// SPDX-License-Identifier: Apache-2.0
#pragma once
// DeepSeek-V3's group-limited routing: the routed experts are split into `groups` contiguous groups
// (expert e is in group e / (experts / groups)) and a token's top-k experts may come from at most
// `topk_group` of them. GroupLimitCounter counts, over token-major top-k expert ids, how many groups each
// token reaches: the tokens over the limit, the most groups any token reached and the histogram.
#include <cstdint>
#include <span>
#include <vector>

namespace epsim::workloads {

class GroupLimitCounter {
 public:
  /// Throws core::Error unless groups >= 1 divides experts and 1 <= topk_group <= groups.
  GroupLimitCounter(int experts, int groups, int topk_group);

  /// Adds the tokens of `token_experts` (tokens x top_k ids, token-major, each < experts). Returns the index
  /// (within this array) of the first token over the limit, or -1. Throws core::Error on an id out of
  /// range or a size that is not a multiple of top_k.
  std::int64_t add(std::span<const std::uint32_t> token_experts, int top_k);

  int experts() const { return experts_; }
  int groups() const { return groups_; }
  int topk_group() const { return topk_group_; }
  std::int64_t tokens() const { return tokens_; }
  std::int64_t tokens_over_limit() const { return over_; }
  int max_groups() const { return max_groups_; }
  /// Tokens per number of distinct groups reached (size groups + 1; index 0 only for top_k = 0).
  const std::vector<std::int64_t>& histogram() const { return histogram_; }
  /// Mean distinct groups per token (0 with no tokens).
  double mean_groups() const;

 private:
  int experts_;
  int groups_;
  int topk_group_;
  int per_group_;
  std::int64_t tokens_ = 0;
  std::int64_t over_ = 0;
  int max_groups_ = 0;
  std::vector<std::int64_t> histogram_;
};

}  // namespace epsim::workloads
