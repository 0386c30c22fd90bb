// SPDX-License-Identifier: Apache-2.0
#include "workloads/group_limit.hpp"

#include <fmt/format.h>

#include <bit>

#include "core/error.hpp"

namespace epsim::workloads {

GroupLimitCounter::GroupLimitCounter(int experts, int groups, int topk_group)
    : experts_(experts), groups_(groups), topk_group_(topk_group), per_group_(groups > 0 ? experts / groups : 0) {
  if (experts < 1 || groups < 1 || experts % groups != 0) {
    throw core::Error(
        fmt::format("group limit: expert groups must be >= 1 and divide the {} experts, got {}", experts, groups));
  }
  if (topk_group < 1 || topk_group > groups) {
    throw core::Error(
        fmt::format("group limit: topk_group must be in [1, {}] (the expert groups), got {}", groups, topk_group));
  }
  histogram_.assign(static_cast<std::size_t>(groups) + 1, 0);
}

std::int64_t GroupLimitCounter::add(std::span<const std::uint32_t> ids, int top_k) {
  if (top_k < 1 || ids.size() % static_cast<std::size_t>(top_k) != 0) {
    throw core::Error(
        fmt::format("group limit: {} token expert ids are not a whole number of tokens of top-{}", ids.size(), top_k));
  }
  const auto k = static_cast<std::size_t>(top_k);
  const std::size_t n = ids.size() / k;
  const auto experts = static_cast<std::uint32_t>(experts_);
  const auto per_group = static_cast<std::uint32_t>(per_group_);
  std::int64_t first = -1;
  for (std::size_t t = 0; t < n; ++t) {
    const std::uint32_t* row = ids.data() + t * k;
    int reached = 0;
    if (groups_ <= 64) {
      // One bit per group: the token's distinct groups are the mask's population count.
      std::uint64_t mask = 0;
      for (std::size_t j = 0; j < k; ++j) {
        if (row[j] >= experts) {
          throw core::Error(fmt::format("group limit: token {} has expert id {}, expected < {}", t, row[j], experts));
        }
        mask |= std::uint64_t{1} << (row[j] / per_group);
      }
      reached = std::popcount(mask);
    } else {
      // More groups than bits: top_k is small, so compare each pick's group with the earlier ones.
      for (std::size_t j = 0; j < k; ++j) {
        if (row[j] >= experts) {
          throw core::Error(fmt::format("group limit: token {} has expert id {}, expected < {}", t, row[j], experts));
        }
        const std::uint32_t g = row[j] / per_group;
        bool seen = false;
        for (std::size_t i = 0; i < j && !seen; ++i) {
          seen = row[i] / per_group == g;
        }
        reached += seen ? 0 : 1;
      }
    }
    ++histogram_[static_cast<std::size_t>(reached)];
    max_groups_ = reached > max_groups_ ? reached : max_groups_;
    if (reached > topk_group_) {
      ++over_;
      first = first < 0 ? static_cast<std::int64_t>(t) : first;
    }
  }
  tokens_ += static_cast<std::int64_t>(n);
  return first;
}

double GroupLimitCounter::mean_groups() const {
  if (tokens_ == 0) {
    return 0.0;
  }
  double sum = 0.0;
  for (std::size_t g = 0; g < histogram_.size(); ++g) {
    sum += static_cast<double>(g) * static_cast<double>(histogram_[g]);
  }
  return sum / static_cast<double>(tokens_);
}

}  // namespace epsim::workloads
