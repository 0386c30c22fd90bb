// SPDX-License-Identifier: Apache-2.0
#include "policies/grace/grace_routing.hpp"

#include <algorithm>
#include <array>
#include <boost/random/binomial_distribution.hpp>
#include <cmath>
#include <string>
#include <string_view>

#include "core/apportion.hpp"
#include "core/error.hpp"

namespace epsim::policies {

GraceRoutingConfig parse_grace_routing_config(core::ParamTable& t) {
  using Pick = GraceRoutingConfig::Choice;
  static constexpr std::array<core::Choice<Pick>, 2> k_choices{
      {{"random", Pick::random}, {"proportional", Pick::proportional}}};
  static constexpr std::array<core::Choice<ReplicaShare>, 2> k_shares{
      {{"paper", ReplicaShare::paper}, {"conserving", ReplicaShare::conserving}}};
  GraceRoutingConfig c;
  c.choice =
      t.choice<Pick>("choice", Pick::random,
                     "random: each token's GPU within its tier drawn with probability proportional to the weight "
                     "(the paper's WeightedRandomChoice); proportional: the expected split of that draw, "
                     "deterministic (largest remainder)",
                     k_choices);
  c.share = t.choice<ReplicaShare>(
      "share", ReplicaShare::paper,
      "Eq. 3's per-instance load W_p: paper = W_max / (n + 1) as printed; conserving = W_r / (n + 1), "
      "the replicated load split evenly",
      k_shares);
  c.seed = static_cast<std::uint64_t>(
      t.integer("seed", 1, "seed of the random choice's generator", {0, std::int64_t{1} << 62}));
  return c;
}

void GraceRouting::predict(std::span<const std::int32_t> expert_tokens, const LayerPlacement& placement) {
  const auto gpus = static_cast<std::size_t>(placement.num_gpus);
  predicted_.assign(gpus, 0.0);
  replicated_.assign(gpus, 0.0);
  unit_share_.assign(gpus, 0.0);
  copies_.assign(gpus, 0);
  hosts_.assign(gpus * gpus, 0);
  for (int e = 0; e < placement.num_experts; ++e) {
    const double t = expert_tokens[static_cast<std::size_t>(e)];
    const std::span<const int> reps = placement.replicas(e);
    const auto primary = static_cast<std::size_t>(placement.gpu_of_slot(reps[0]));
    predicted_[primary] += t;  // W_i: before replication every token goes to the primary
    int others = 0;
    for (const int s : reps.subspan(1)) {
      const auto g = static_cast<std::size_t>(placement.gpu_of_slot(s));
      if (g != primary) {
        hosts_[primary * gpus + g] = 1;
        ++others;
      }
    }
    if (others > 0) {
      replicated_[primary] += t;
      copies_[primary] = std::max(copies_[primary], others);
    }
  }
  for (std::size_t h = 0; h < gpus; ++h) {  // every W_p from the pre-replication loads first
    if (copies_[h] > 0) {
      unit_share_[h] = replica_share(predicted_[h], replicated_[h], copies_[h], cfg_.share);
    }
  }
  for (std::size_t h = 0; h < gpus; ++h) {
    if (copies_[h] == 0) {
      continue;
    }
    predicted_[h] += unit_share_[h] - replicated_[h];  // W'_max = W_max - W_r + W_p
    for (std::size_t g = 0; g < gpus; ++g) {
      predicted_[g] += hosts_[h * gpus + g] ? unit_share_[h] : 0.0;  // W'_i = W_i + W_p
    }
  }
}

void GraceRouting::split(std::int32_t tokens, int origin, RoutedLoad& out) {
  const std::span<std::int32_t> slot_tokens = out.slot_tokens;
  const std::size_t gpus = gpu_slot_.size();
  const std::size_t m = candidates_.size();
  weights_.clear();
  double total = 0.0;
  for (const int g : candidates_) {
    weights_.push_back(1.0 / std::max(predicted_[static_cast<std::size_t>(g)], 1.0));
    total += weights_.back();
  }
  share_.assign(m, 0);
  if (cfg_.choice == GraceRoutingConfig::Choice::random) {
    // Per-token categorical draws = a multinomial: successive binomials on what is left.
    std::int32_t left = tokens;
    for (std::size_t j = 0; j + 1 < m && left > 0; ++j) {
      const double p = std::clamp(weights_[j] / total, 0.0, 1.0);
      share_[j] = boost::random::binomial_distribution<std::int32_t, double>(left, p)(rng_);
      left -= share_[j];
      total -= weights_[j];
    }
    share_[m - 1] += left;
  } else {
    quota_.assign(m, 0.0);  // ties of the largest remainder go to the lower GPU
    for (std::size_t j = 0; j < m; ++j) {
      quota_[j] = tokens * weights_[j] / total;
    }
    core::apportion(tokens, quota_, share_);
  }
  for (std::size_t j = 0; j < m; ++j) {
    const auto g = static_cast<std::size_t>(candidates_[j]);
    slot_tokens[static_cast<std::size_t>(gpu_slot_[g])] += share_[j];
    out.origin_gpu_tokens[static_cast<std::size_t>(origin) * gpus + g] += share_[j];
  }
}

void GraceRouting::route(const StepLayerLoad& load, const LayerPlacement& placement, RoutedLoad& out) {
  const int gpus = placement.num_gpus;
  const int experts = placement.num_experts;
  const auto ug = static_cast<std::size_t>(gpus);
  const auto ue = static_cast<std::size_t>(experts);
  const int per_node = load.gpus_per_node > 0 ? load.gpus_per_node : gpus;
  if (load.expert_tokens.size() != ue || out.slot_tokens.size() != static_cast<std::size_t>(placement.num_slots()) ||
      gpus % per_node != 0 || (!load.origin_tokens.empty() && load.origin_tokens.size() != ug * ue)) {
    throw core::Error("grace routing: expected " + std::to_string(experts) + " expert counts, " +
                      std::to_string(placement.num_slots()) + " output slots, origin counts empty or " +
                      std::to_string(ug * ue) + " (GPUs x experts), GPUs a multiple of gpus_per_node " +
                      std::to_string(per_node));
  }
  std::fill(out.slot_tokens.begin(), out.slot_tokens.end(), 0);
  out.all_gather_dispatch = false;
  out.per_origin = true;
  out.origin_gpu_tokens.assign(ug * ug, 0);  // keeps its capacity: no allocation after the first call
  predict(load.expert_tokens, placement);
  gpu_slot_.assign(ug, -1);
  candidates_.reserve(ug);  // every buffer at its largest size: later calls do not allocate
  weights_.reserve(ug);
  share_.reserve(ug);
  quota_.reserve(ug);
  for (int e = 0; e < experts; ++e) {
    const std::int32_t t = load.expert_tokens[static_cast<std::size_t>(e)];
    if (!load.origin_tokens.empty()) {
      std::int64_t sum = 0;
      for (std::size_t o = 0; o < ug; ++o) {
        sum += load.origin_tokens[o * ue + static_cast<std::size_t>(e)];
      }
      if (sum != t) {
        throw core::Error("grace routing: origin counts of expert " + std::to_string(e) + " sum to " +
                          std::to_string(sum) + ", expected its " + std::to_string(t) + " tokens");
      }
    }
    if (t < 0) {
      throw core::Error("grace routing: expert " + std::to_string(e) + " has a negative token count");
    }
    if (t == 0) {
      continue;
    }
    const std::span<const int> reps = placement.replicas(e);
    for (const int s : reps) {
      int& lowest = gpu_slot_[static_cast<std::size_t>(placement.gpu_of_slot(s))];
      lowest = lowest < 0 ? s : std::min(lowest, s);
    }
    for (int o = 0; o < gpus; ++o) {
      const std::int32_t c = load.origin_tokens.empty()
                                 ? t / gpus + (((o - e) % gpus + gpus) % gpus < t % gpus ? 1 : 0)
                                 : load.origin_tokens[static_cast<std::size_t>(o) * ue + static_cast<std::size_t>(e)];
      if (c == 0) {
        continue;
      }
      const int local = gpu_slot_[static_cast<std::size_t>(o)];
      if (local >= 0) {  // tier 1: a replica on the token's own GPU
        out.slot_tokens[static_cast<std::size_t>(local)] += c;
        out.origin_gpu_tokens[static_cast<std::size_t>(o) * ug + static_cast<std::size_t>(o)] += c;
        continue;
      }
      // Tier 2: replicas on the origin's node; tier 3 (none there): every replica.
      for (const bool same_node : {true, false}) {
        candidates_.clear();
        for (const int s : reps) {
          const int g = placement.gpu_of_slot(s);
          if (gpu_slot_[static_cast<std::size_t>(g)] == s && (!same_node || g / per_node == o / per_node)) {
            candidates_.push_back(g);
          }
        }
        if (!candidates_.empty()) {
          break;
        }
      }
      std::sort(candidates_.begin(), candidates_.end());
      split(c, o, out);
    }
    for (const int s : reps) {
      gpu_slot_[static_cast<std::size_t>(placement.gpu_of_slot(s))] = -1;
    }
  }
}

}  // namespace epsim::policies
