// SPDX-License-Identifier: Apache-2.0
#include "policies/vibe/vibe_placement.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "core/error.hpp"

namespace epsim::policies {

std::vector<int> vibe_initial_layer(std::span<const double> load, const CostCurves& curves, int gpus,
                                    int slots_per_gpu) {
  const auto E = static_cast<int>(load.size());
  if (static_cast<std::int64_t>(gpus) * slots_per_gpu < E) {
    throw core::Error(fmt::format("vibe: {} experts do not fit {} GPUs x {} slots", E, gpus, slots_per_gpu));
  }
  const double total = std::accumulate(load.begin(), load.end(), 0.0);
  const auto G = static_cast<std::size_t>(gpus);
  std::vector<double> target(G, 0.0);
  double speed_sum = 0.0;
  for (std::size_t g = 0; g < G; ++g) {
    const double f = curves.ns(static_cast<int>(g), total / E);
    target[g] = f > 0.0 ? 1.0 / f : 1.0;  // no load at all: every GPU counts as equally fast
    speed_sum += target[g];
  }
  for (double& t : target) {
    t = total * t / speed_sum;
  }
  std::vector<int> order(static_cast<std::size_t>(E));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return load[static_cast<std::size_t>(a)] > load[static_cast<std::size_t>(b)]; });
  std::vector<double> n(G, 0.0);
  std::vector<int> used(G, 0);
  std::vector<int> phy2log(G * static_cast<std::size_t>(slots_per_gpu), -1);
  // Equal experts per GPU: ceil(E / G) at most, whatever slots are spare (redundant ones stay empty).
  const int cap = std::min(slots_per_gpu, (E + gpus - 1) / gpus);
  for (const int e : order) {
    std::size_t best = G;
    for (std::size_t g = 0; g < G; ++g) {
      if (used[g] < cap && (best == G || target[g] - n[g] > target[best] - n[best])) {
        best = g;
      }
    }
    phy2log[best * static_cast<std::size_t>(slots_per_gpu) + static_cast<std::size_t>(used[best]++)] = e;
    n[best] += load[static_cast<std::size_t>(e)];
  }
  return phy2log;
}

std::vector<double> predicted_gpu_ns(std::span<const int> phy2log, std::span<const double> load,
                                     const CostCurves& curves, int gpus, int slots_per_gpu) {
  std::vector<int> copies(load.size(), 0);
  for (const int e : phy2log) {
    if (e >= 0) {
      ++copies[static_cast<std::size_t>(e)];
    }
  }
  std::vector<double> n(static_cast<std::size_t>(gpus), 0.0);
  std::vector<double> active(static_cast<std::size_t>(gpus), 0.0);
  for (std::size_t s = 0; s < phy2log.size(); ++s) {
    const int e = phy2log[s];
    if (e >= 0) {
      const double share = load[static_cast<std::size_t>(e)] / copies[static_cast<std::size_t>(e)];
      n[s / static_cast<std::size_t>(slots_per_gpu)] += share;
      active[s / static_cast<std::size_t>(slots_per_gpu)] += activation_probability(share);
    }
  }
  for (std::size_t g = 0; g < n.size(); ++g) {
    n[g] = curves.ns(static_cast<int>(g), n[g], active[g]);
  }
  return n;
}

VibeIncrementalResult vibe_incremental_layer(std::vector<int>& phy2log, std::span<const double> load,
                                             const CostCurves& curves, int gpus, int slots_per_gpu, double epsilon,
                                             int max_swaps) {
  const auto G = static_cast<std::size_t>(gpus);
  const auto S = static_cast<std::size_t>(slots_per_gpu);
  // Replicated experts (a placement made by another policy) count for their share on each GPU.
  std::vector<int> copies(load.size(), 0);
  for (const int e : phy2log) {
    if (e >= 0) {
      ++copies[static_cast<std::size_t>(e)];
    }
  }
  const auto w = [&](int e) {
    return e < 0 ? 0.0 : load[static_cast<std::size_t>(e)] / copies[static_cast<std::size_t>(e)];
  };
  const auto on = [&](int e) { return activation_probability(w(e)); };  // expected activation
  std::vector<double> n(G, 0.0);
  std::vector<double> active(G, 0.0);
  std::vector<int> held(G, 0);  // experts per GPU: a move into an empty slot may not exceed cap
  for (std::size_t s = 0; s < phy2log.size(); ++s) {
    n[s / S] += w(phy2log[s]);
    active[s / S] += on(phy2log[s]);
    held[s / S] += phy2log[s] >= 0 ? 1 : 0;
  }
  const int cap =
      std::max(*std::max_element(held.begin(), held.end()), (static_cast<int>(load.size()) + gpus - 1) / gpus);
  std::vector<double> f(G);
  for (std::size_t g = 0; g < G; ++g) {
    f[g] = curves.ns(static_cast<int>(g), n[g], active[g]);
  }
  VibeIncrementalResult res;
  res.max_ns_before = *std::max_element(f.begin(), f.end());
  while (res.swaps < max_swaps) {
    const double mean = std::accumulate(f.begin(), f.end(), 0.0) / static_cast<double>(G);
    const auto slow = static_cast<std::size_t>(std::max_element(f.begin(), f.end()) - f.begin());
    const auto fast = static_cast<std::size_t>(std::min_element(f.begin(), f.end()) - f.begin());
    if (f[slow] <= (1.0 + epsilon) * mean || slow == fast) {
      break;
    }
    // Best swap between the slowest and the fastest GPU: the largest drop of the pair's slower time.
    double best_gain = 0.0;
    std::size_t bi = 0;
    std::size_t bj = 0;
    double best_fs = 0.0;
    double best_ff = 0.0;
    for (std::size_t i = slow * S; i < (slow + 1) * S; ++i) {
      for (std::size_t j = fast * S; j < (fast + 1) * S; ++j) {
        const int ei = phy2log[i];
        const int ej = phy2log[j];
        if (ei == ej) {
          continue;  // two empty slots, or two copies of one expert
        }
        if ((ei < 0 && held[slow] >= cap) || (ej < 0 && held[fast] >= cap)) {
          continue;  // a move that would leave one GPU with more experts than the equal share
        }
        const double d = w(ej) - w(ei);
        const double da = on(ej) - on(ei);
        const double fs = curves.ns(static_cast<int>(slow), n[slow] + d, active[slow] + da);
        const double ff = curves.ns(static_cast<int>(fast), n[fast] - d, active[fast] - da);
        const double gain = f[slow] - std::max(fs, ff);
        if (gain > best_gain) {
          best_gain = gain;
          bi = i;
          bj = j;
          best_fs = fs;
          best_ff = ff;
        }
      }
    }
    if (best_gain <= 0.0) {
      break;
    }
    const double d = w(phy2log[bj]) - w(phy2log[bi]);
    const double da = on(phy2log[bj]) - on(phy2log[bi]);
    active[slow] += da;
    active[fast] -= da;
    held[slow] += (phy2log[bj] >= 0 ? 1 : 0) - (phy2log[bi] >= 0 ? 1 : 0);
    held[fast] += (phy2log[bi] >= 0 ? 1 : 0) - (phy2log[bj] >= 0 ? 1 : 0);
    std::swap(phy2log[bi], phy2log[bj]);
    n[slow] += d;
    n[fast] -= d;
    f[slow] = best_fs;
    f[fast] = best_ff;
    ++res.swaps;
  }
  res.max_ns_after = *std::max_element(f.begin(), f.end());
  return res;
}

Placement VibePlacement::place(const PlacementInput& in) {
  const auto E = static_cast<std::size_t>(in.num_experts);
  const LoadWindow& window = in.load_window();
  const CostCurves& curves = in.cost_curves();
  // Tokens per step: the window's mean when its steps are known, else the loads as given.
  const double per_step = window.steps() > 0 ? 1.0 / window.steps() : 1.0;
  std::vector<double> w(E);
  Placement out;
  for (int l = 0; l < in.num_layers; ++l) {
    for (std::size_t e = 0; e < E; ++e) {
      w[e] = window.total()[static_cast<std::size_t>(l) * E + e] * per_step;
    }
    out.layers.push_back(make_layer_placement(in.num_experts, in.num_gpus, in.slots_per_gpu,
                                              vibe_initial_layer(w, curves, in.num_gpus, in.slots_per_gpu)));
  }
  return out;
}

}  // namespace epsim::policies
