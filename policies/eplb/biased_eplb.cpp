// SPDX-License-Identifier: Apache-2.0
#include "policies/eplb/biased_eplb.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "core/error.hpp"
#include "policies/eplb/eplb.hpp"

namespace epsim::policies::eplb {

void biased_layer(const std::vector<float>& w, int slots, int gpus, std::vector<int>& phy2log, std::vector<int>& rank) {
  const auto experts = static_cast<int>(w.size());
  if (experts < 1 || gpus < 1 || slots < experts || slots % gpus != 0) {
    throw core::Error(fmt::format("biased EPLB: {} slots must be >= the {} experts and a multiple of the {} GPUs",
                                  slots, experts, gpus));
  }
  const int per_gpu = slots / gpus;
  // K = redundant // GPUs, as ATOM. K x GPUs <= redundant leaves the other experts at least one slot each.
  const int hot_count = (slots - experts) / gpus;
  // Hottest first; ties: lower id (a stable order).
  std::vector<int> order(static_cast<std::size_t>(experts));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return w[static_cast<std::size_t>(a)] > w[static_cast<std::size_t>(b)]; });
  std::vector<bool> hot(static_cast<std::size_t>(experts), false);
  for (int k = 0; k < hot_count; ++k) {
    hot[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])] = true;
  }
  phy2log.assign(static_cast<std::size_t>(slots), -1);
  rank.assign(static_cast<std::size_t>(slots), 0);
  for (int g = 0; g < gpus; ++g) {
    for (int k = 0; k < hot_count; ++k) {
      const int slot = g * per_gpu + k;  // < slots, an int
      const auto s = static_cast<std::size_t>(slot);
      phy2log[s] = order[static_cast<std::size_t>(k)];
      rank[s] = g;
    }
  }
  // The rest: DeepSeek's replication over their slots, then balanced packing onto the GPUs' other slots.
  std::vector<int> rest;
  std::vector<float> rest_w;
  for (int e = 0; e < experts; ++e) {
    if (!hot[static_cast<std::size_t>(e)]) {
      rest.push_back(e);
      rest_w.push_back(w[static_cast<std::size_t>(e)]);
    }
  }
  const int rest_slots = slots - hot_count * gpus;
  std::vector<int> phy2rest;
  std::vector<int> rest_rank;
  std::vector<int> count;
  replicate_experts(rest_w, rest_slots, phy2rest, rest_rank, count);
  std::vector<float> slot_w(static_cast<std::size_t>(rest_slots));
  for (int s = 0; s < rest_slots; ++s) {
    const auto j = static_cast<std::size_t>(phy2rest[static_cast<std::size_t>(s)]);
    slot_w[static_cast<std::size_t>(s)] = rest_w[j] / static_cast<float>(count[j]);
  }
  std::vector<int> pack;
  std::vector<int> rank_in_pack;
  balanced_packing(slot_w, gpus, pack, rank_in_pack);
  for (int s = 0; s < rest_slots; ++s) {
    const auto i = static_cast<std::size_t>(s);
    const int slot = pack[i] * per_gpu + hot_count + rank_in_pack[i];  // < slots, an int
    const auto at = static_cast<std::size_t>(slot);
    phy2log[at] = rest[static_cast<std::size_t>(phy2rest[i])];
    rank[at] = rest_rank[i];
  }
}

}  // namespace epsim::policies::eplb
