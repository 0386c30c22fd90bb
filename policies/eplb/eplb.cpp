// SPDX-License-Identifier: Apache-2.0
#include "policies/eplb/eplb.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "core/error.hpp"

namespace epsim::policies::eplb {

void balanced_packing(const std::vector<float>& w, int packs, std::vector<int>& pack, std::vector<int>& rank) {
  const auto n = static_cast<int>(w.size());
  const int per_pack = n / packs;
  pack.assign(static_cast<std::size_t>(n), -1);
  rank.assign(static_cast<std::size_t>(n), -1);
  if (per_pack == 1) {
    std::iota(pack.begin(), pack.end(), 0);
    std::fill(rank.begin(), rank.end(), 0);
    return;
  }
  std::vector<int> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return w[static_cast<std::size_t>(a)] > w[static_cast<std::size_t>(b)]; });
  std::vector<float> pack_weight(static_cast<std::size_t>(packs), 0.0F);
  std::vector<int> pack_items(static_cast<std::size_t>(packs), 0);
  for (const int item : order) {
    int best = -1;
    for (int p = 0; p < packs; ++p) {
      if (pack_items[static_cast<std::size_t>(p)] < per_pack &&
          (best < 0 || pack_weight[static_cast<std::size_t>(p)] < pack_weight[static_cast<std::size_t>(best)])) {
        best = p;
      }
    }
    pack[static_cast<std::size_t>(item)] = best;
    rank[static_cast<std::size_t>(item)] = pack_items[static_cast<std::size_t>(best)];
    pack_weight[static_cast<std::size_t>(best)] += w[static_cast<std::size_t>(item)];
    ++pack_items[static_cast<std::size_t>(best)];
  }
}

void replicate_experts(const std::vector<float>& w, int num_phy, std::vector<int>& phy2log, std::vector<int>& rank,
                       std::vector<int>& count, int max_count) {
  const auto m = static_cast<int>(w.size());
  phy2log.resize(static_cast<std::size_t>(num_phy));
  rank.assign(static_cast<std::size_t>(num_phy), 0);
  count.assign(static_cast<std::size_t>(m), 1);
  std::iota(phy2log.begin(), phy2log.begin() + m, 0);
  for (int s = m; s < num_phy; ++s) {
    int best = -1;
    float best_load = 0.0F;
    for (int e = 0; e < m; ++e) {
      if (max_count > 0 && count[static_cast<std::size_t>(e)] >= max_count) {
        continue;
      }
      const float load = w[static_cast<std::size_t>(e)] / static_cast<float>(count[static_cast<std::size_t>(e)]);
      if (best < 0 || load > best_load) {
        best = e;
        best_load = load;
      }
    }
    if (best < 0) {
      throw core::Error(
          fmt::format("EPLB: {} slots for {} experts of at most {} replicas each", num_phy, m, max_count));
    }
    phy2log[static_cast<std::size_t>(s)] = best;
    rank[static_cast<std::size_t>(s)] = count[static_cast<std::size_t>(best)];
    ++count[static_cast<std::size_t>(best)];
  }
}

void distinct_packing(const std::vector<float>& w, const std::vector<int>& expert, int packs, std::vector<int>& pack,
                      std::vector<int>& rank) {
  const auto n = static_cast<int>(w.size());
  const int per_pack = n / packs;
  const auto at = [](auto& v, int i) -> auto& {
    return v[static_cast<std::size_t>(i)];
  };
  std::vector<int> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return at(w, a) > at(w, b); });
  std::vector<float> weight(static_cast<std::size_t>(packs), 0.0F);
  std::vector<std::vector<int>> items(static_cast<std::size_t>(packs));  // item ids per pack
  const auto holds = [&](int p, int e) {
    return std::any_of(at(items, p).begin(), at(items, p).end(), [&](int i) { return at(expert, i) == e; });
  };
  const auto put = [&](int item, int p) {
    at(items, p).push_back(item);
    at(weight, p) += at(w, item);
  };
  for (const int item : order) {
    const int e = at(expert, item);
    int best = -1;
    for (int p = 0; p < packs; ++p) {
      if (static_cast<int>(at(items, p).size()) < per_pack && !holds(p, e) &&
          (best < 0 || at(weight, p) < at(weight, best))) {
        best = p;
      }
    }
    if (best >= 0) {
      put(item, best);
      continue;
    }
    // Every pack with room holds e: move an item y (expert f) from a pack p without e, lightest first, to a
    // pack q with room that lacks f, and put the item into p.
    std::vector<int> by_weight(static_cast<std::size_t>(packs));
    std::iota(by_weight.begin(), by_weight.end(), 0);
    std::stable_sort(by_weight.begin(), by_weight.end(), [&](int a, int b) { return at(weight, a) < at(weight, b); });
    bool moved = false;
    for (const int p : by_weight) {
      if (holds(p, e)) {
        continue;
      }
      auto& in_p = at(items, p);
      for (std::size_t k = 0; k < in_p.size() && !moved; ++k) {
        const int y = in_p[k];
        for (int q = 0; q < packs && !moved; ++q) {
          if (q != p && static_cast<int>(at(items, q).size()) < per_pack && !holds(q, at(expert, y))) {
            in_p.erase(in_p.begin() + static_cast<std::ptrdiff_t>(k));
            at(weight, p) -= at(w, y);
            put(y, q);
            put(item, p);
            moved = true;
          }
        }
      }
      if (moved) {
        break;
      }
    }
    if (!moved) {
      throw core::Error(
          fmt::format("EPLB (distinct): no GPU can take another replica of expert {} without holding two", e));
    }
  }
  pack.assign(static_cast<std::size_t>(n), -1);
  rank.assign(static_cast<std::size_t>(n), -1);
  for (int p = 0; p < packs; ++p) {
    for (std::size_t k = 0; k < at(items, p).size(); ++k) {
      at(pack, at(items, p)[k]) = p;
      at(rank, at(items, p)[k]) = static_cast<int>(k);
    }
  }
}

namespace {

// One layer of rebalance_experts_hierarchical. Outputs phy2log, phyrank (size R) and logcnt (size E).
void hierarchical_layer(const std::vector<float>& w, int replicas, int groups, int nodes, int gpus, bool distinct,
                        std::vector<int>& phy2log, std::vector<int>& phyrank, std::vector<int>& logcnt) {
  const auto experts = static_cast<int>(w.size());
  const int group_size = experts / groups;
  const int groups_per_node = groups / nodes;
  const int per_gpu = replicas / gpus;
  const int log_per_node = experts / nodes;
  const int phy_per_node = replicas / nodes;

  // Step 1: pack groups onto nodes by their summed weight.
  std::vector<float> group_weight(static_cast<std::size_t>(groups), 0.0F);
  for (int g = 0; g < groups; ++g) {
    for (int k = 0; k < group_size; ++k) {
      group_weight[static_cast<std::size_t>(g)] +=
          w[static_cast<std::size_t>(g) * static_cast<std::size_t>(group_size) + static_cast<std::size_t>(k)];
    }
  }
  std::vector<int> group_pack;
  std::vector<int> group_rank;
  balanced_packing(group_weight, nodes, group_pack, group_rank);
  // log2mlog: experts renumbered node-major, in pack / rank order.
  std::vector<int> log2mlog(static_cast<std::size_t>(experts));
  std::vector<int> mlog2log(static_cast<std::size_t>(experts));
  for (int e = 0; e < experts; ++e) {
    const int g = e / group_size;
    const int mlog =
        (group_pack[static_cast<std::size_t>(g)] * groups_per_node + group_rank[static_cast<std::size_t>(g)]) *
            group_size +
        e % group_size;
    log2mlog[static_cast<std::size_t>(e)] = mlog;
    mlog2log[static_cast<std::size_t>(mlog)] = e;
  }
  phy2log.assign(static_cast<std::size_t>(replicas), -1);
  phyrank.assign(static_cast<std::size_t>(replicas), 0);
  logcnt.assign(static_cast<std::size_t>(experts), 0);
  std::vector<float> node_w(static_cast<std::size_t>(log_per_node));
  std::vector<int> phy2mlog;
  std::vector<int> rank;
  std::vector<int> mlogcnt;
  std::vector<float> phy_w(static_cast<std::size_t>(phy_per_node));
  std::vector<int> pack;
  std::vector<int> rank_in_pack;
  for (int node = 0; node < nodes; ++node) {
    // Step 2: replicate the node's experts onto its R / N slots.
    for (int j = 0; j < log_per_node; ++j) {
      node_w[static_cast<std::size_t>(j)] =
          w[static_cast<std::size_t>(mlog2log[static_cast<std::size_t>(node) * static_cast<std::size_t>(log_per_node) +
                                              static_cast<std::size_t>(j)])];
    }
    replicate_experts(node_w, phy_per_node, phy2mlog, rank, mlogcnt, distinct ? gpus / nodes : 0);
    // Step 3: pack the node's slots, weighted by expert weight / replica count, onto its P / N GPUs.
    for (int s = 0; s < phy_per_node; ++s) {
      const int j = phy2mlog[static_cast<std::size_t>(s)];
      phy_w[static_cast<std::size_t>(s)] =
          node_w[static_cast<std::size_t>(j)] / static_cast<float>(mlogcnt[static_cast<std::size_t>(j)]);
    }
    if (distinct) {
      distinct_packing(phy_w, phy2mlog, gpus / nodes, pack, rank_in_pack);
    } else {
      balanced_packing(phy_w, gpus / nodes, pack, rank_in_pack);
    }
    // Step 4: back to logical ids. Slot s of the node lands at pphy = pack * per_gpu + rank_in_pack.
    for (int s = 0; s < phy_per_node; ++s) {
      const int pphy = pack[static_cast<std::size_t>(s)] * per_gpu + rank_in_pack[static_cast<std::size_t>(s)];
      const int mlog = node * log_per_node + phy2mlog[static_cast<std::size_t>(s)];
      phy2log[static_cast<std::size_t>(node) * static_cast<std::size_t>(phy_per_node) +
              static_cast<std::size_t>(pphy)] = mlog2log[static_cast<std::size_t>(mlog)];
      phyrank[static_cast<std::size_t>(node) * static_cast<std::size_t>(phy_per_node) +
              static_cast<std::size_t>(pphy)] = rank[static_cast<std::size_t>(s)];
    }
    for (int j = 0; j < log_per_node; ++j) {
      logcnt[static_cast<std::size_t>(mlog2log[static_cast<std::size_t>(node) * static_cast<std::size_t>(log_per_node) +
                                               static_cast<std::size_t>(j)])] = mlogcnt[static_cast<std::size_t>(j)];
    }
  }
}

}  // namespace

Result rebalance_experts(const std::vector<double>& weight, int layers, int experts, int num_replicas, int num_groups,
                         int num_nodes, int num_gpus, bool distinct) {
  const auto fail = [](const std::string& what) { return core::Error("EPLB: " + what); };
  if (layers < 1 || experts < 1 || static_cast<int>(weight.size()) != layers * experts) {
    throw fail(fmt::format("the weight matrix must be layers x experts ({} x {}), got {} values", layers, experts,
                           weight.size()));
  }
  if (num_groups < 1 || num_nodes < 1 || num_gpus < 1) {
    throw fail("num_groups, num_nodes and num_gpus must be >= 1");
  }
  if (num_replicas < experts) {
    throw fail(fmt::format("num_replicas ({}) must be >= the number of experts ({})", num_replicas, experts));
  }
  if (num_replicas % num_gpus != 0) {
    throw fail(fmt::format("num_replicas ({}) must be a multiple of num_gpus ({})", num_replicas, num_gpus));
  }
  if (num_gpus % num_nodes != 0) {
    throw fail(fmt::format("num_gpus ({}) must be a multiple of num_nodes ({})", num_gpus, num_nodes));
  }
  if (experts % num_groups != 0) {
    throw fail(fmt::format("the number of experts ({}) must be divisible by num_groups ({})", experts, num_groups));
  }
  for (const double x : weight) {
    if (!(x >= 0.0)) {
      throw fail("expert loads must be >= 0");
    }
  }
  const bool hierarchical = num_groups % num_nodes == 0;
  const int groups = hierarchical ? num_groups : 1;
  const int nodes = hierarchical ? num_nodes : 1;
  if (distinct && num_replicas / num_gpus > experts / nodes) {
    throw fail(
        fmt::format("distinct replicas per GPU: {} slots per GPU, but a GPU may hold only the {} experts of "
                    "its node once each",
                    num_replicas / num_gpus, experts / nodes));
  }
  Result r;
  r.layers = layers;
  r.experts = experts;
  r.replicas = num_replicas;
  r.phy2log.resize(static_cast<std::size_t>(layers) * static_cast<std::size_t>(num_replicas));
  r.phyrank.resize(r.phy2log.size());
  r.logcnt.resize(static_cast<std::size_t>(layers) * static_cast<std::size_t>(experts));
  std::vector<float> w(static_cast<std::size_t>(experts));
  std::vector<int> phy2log;
  std::vector<int> phyrank;
  std::vector<int> logcnt;
  for (int l = 0; l < layers; ++l) {
    for (int e = 0; e < experts; ++e) {
      w[static_cast<std::size_t>(e)] = static_cast<float>(
          weight[static_cast<std::size_t>(l) * static_cast<std::size_t>(experts) + static_cast<std::size_t>(e)]);
    }
    hierarchical_layer(w, num_replicas, groups, nodes, num_gpus, distinct, phy2log, phyrank, logcnt);
    std::copy(phy2log.begin(), phy2log.end(), r.phy2log.begin() + static_cast<std::ptrdiff_t>(l) * num_replicas);
    std::copy(phyrank.begin(), phyrank.end(), r.phyrank.begin() + static_cast<std::ptrdiff_t>(l) * num_replicas);
    std::copy(logcnt.begin(), logcnt.end(), r.logcnt.begin() + static_cast<std::ptrdiff_t>(l) * experts);
  }
  r.max_count = *std::max_element(r.logcnt.begin(), r.logcnt.end());
  r.log2phy.assign(
      static_cast<std::size_t>(layers) * static_cast<std::size_t>(experts) * static_cast<std::size_t>(r.max_count), -1);
  for (int l = 0; l < layers; ++l) {
    for (int s = 0; s < num_replicas; ++s) {
      const auto i = static_cast<std::size_t>(l) * static_cast<std::size_t>(num_replicas) + static_cast<std::size_t>(s);
      const auto e = static_cast<std::size_t>(r.phy2log[i]);
      r.log2phy[(static_cast<std::size_t>(l) * static_cast<std::size_t>(experts) + e) *
                    static_cast<std::size_t>(r.max_count) +
                static_cast<std::size_t>(r.phyrank[i])] = s;
    }
  }
  return r;
}

}  // namespace epsim::policies::eplb
