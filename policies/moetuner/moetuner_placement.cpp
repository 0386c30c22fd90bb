// SPDX-License-Identifier: Apache-2.0
#include "policies/moetuner/moetuner_placement.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>

#include "core/error.hpp"
#include "policies/assignment_lp.hpp"

namespace epsim::policies {

std::vector<int> balanced_clusters(std::span<const double> load, std::span<const int> sizes) {
  const std::size_t n = load.size();
  const std::size_t k = sizes.size();
  if (k == 0 || std::accumulate(sizes.begin(), sizes.end(), std::size_t{0},
                                [](std::size_t s, int x) { return s + static_cast<std::size_t>(x); }) != n) {
    throw core::Error(fmt::format("moetuner: cluster sizes must add up to the {} experts", n));
  }
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return load[a] > load[b]; });
  std::vector<int> cluster(n, -1);
  std::vector<double> sum(k, 0.0);
  std::vector<int> members(k, 0);
  for (const std::size_t e : order) {
    std::size_t best = k;
    for (std::size_t c = 0; c < k; ++c) {
      if (members[c] < sizes[c] && (best == k || sum[c] < sum[best])) {
        best = c;
      }
    }
    cluster[e] = static_cast<int>(best);
    sum[best] += load[e];
    ++members[best];
  }
  // Swaps out of the heaviest cluster: each lowers the sum of squared cluster loads (both new loads are
  // below the old maximum), so the search ends; the bound is a guard, never reached in practice.
  for (std::size_t round = 0; round < n * n + 1; ++round) {
    const auto heavy = static_cast<std::size_t>(std::max_element(sum.begin(), sum.end()) - sum.begin());
    const double top = sum[heavy];
    double best_max = top - 1e-12 * std::max(top, 1.0);
    std::size_t best_a = n;
    std::size_t best_b = n;
    for (std::size_t a = 0; a < n; ++a) {
      if (static_cast<std::size_t>(cluster[a]) != heavy) {
        continue;
      }
      for (std::size_t b = 0; b < n; ++b) {
        const auto other = static_cast<std::size_t>(cluster[b]);
        const double d = load[a] - load[b];
        if (other == heavy || d <= 0.0) {
          continue;
        }
        const double new_max = std::max(top - d, sum[other] + d);
        if (new_max < best_max) {
          best_max = new_max;
          best_a = a;
          best_b = b;
        }
      }
    }
    if (best_a == n) {
      break;
    }
    const auto other = static_cast<std::size_t>(cluster[best_b]);
    const double d = load[best_a] - load[best_b];
    sum[heavy] -= d;
    sum[other] += d;
    cluster[best_a] = static_cast<int>(other);
    cluster[best_b] = static_cast<int>(heavy);
  }
  return cluster;
}

std::vector<int> best_assignment(std::span<const double> affinity, int n) {
  const auto N = static_cast<std::size_t>(n);
  if (n < 1 || affinity.size() != N * N) {
    throw core::Error(fmt::format("moetuner: an assignment of {} clusters needs {} x {} affinities", n, n, n));
  }
  std::vector<int> gpu_of(N);
  std::iota(gpu_of.begin(), gpu_of.end(), 0);
  const double scale =
      *std::max_element(affinity.begin(), affinity.end(), [](double a, double b) { return std::abs(a) < std::abs(b); });
  if (n == 1 || scale == 0.0) {
    return gpu_of;
  }
  // Scaled to at most 1 in size for the LP's tolerances.
  std::vector<double> value(N * N);
  for (std::size_t i = 0; i < N * N; ++i) {
    value[i] = affinity[i] / std::abs(scale);
  }
  const std::vector<int> cluster_of_gpu = max_value_assignment(value, n, "moetuner");
  for (std::size_t g = 0; g < N; ++g) {
    gpu_of[static_cast<std::size_t>(cluster_of_gpu[g])] = static_cast<int>(g);
  }
  return gpu_of;
}

Placement MoetunerPlacement::place(const PlacementInput& in) {
  const int E = in.num_experts;
  const int G = in.num_gpus;
  if (G < 1 || E < G) {
    throw core::Error(fmt::format("moetuner placement: {} experts cannot cover {} GPUs", E, G));
  }
  if (const int most = max_ep_size(); most > 0 && G > most) {
    throw core::Error(
        fmt::format("moetuner: an EP group of {} GPUs is over its bound of {} (the cross-layer "
                    "mapping's assignment LP; docs/policies.md, Bounds): cross_layer = false places "
                    "the balanced clusters alone",
                    G, most));
  }
  // Cluster sizes as linear placement's: floor(E / G) or one more.
  std::vector<int> sizes(static_cast<std::size_t>(G), 0);
  for (int e = 0; e < E; ++e) {
    ++sizes[static_cast<std::size_t>(static_cast<std::int64_t>(e) * G / E)];
  }
  const int most = *std::max_element(sizes.begin(), sizes.end());
  if (in.slots_per_gpu < most) {
    throw core::Error(
        fmt::format("moetuner placement: {} experts on a GPU need that many slots, got {}", most, in.slots_per_gpu));
  }
  const LoadWindow& window = in.load_window();
  const auto n_e = static_cast<std::size_t>(E);
  const auto n_g = static_cast<std::size_t>(G);
  Placement p;
  std::vector<int> prev_gpu(n_e, 0);  // layer l - 1's GPU of each expert
  std::vector<double> affinity(n_g * n_g);
  for (int l = 0; l < in.num_layers; ++l) {
    const std::vector<int> cluster = balanced_clusters(window.total(l), sizes);
    std::vector<int> gpu_of_cluster(n_g);
    std::iota(gpu_of_cluster.begin(), gpu_of_cluster.end(), 0);
    if (o_.cross_layer && l > 0) {
      const std::span<const double> t = in.transitions().between(l - 1);
      std::fill(affinity.begin(), affinity.end(), 0.0);
      for (std::size_t a = 0; a < n_e; ++a) {
        double* row = affinity.data() + static_cast<std::size_t>(prev_gpu[a]) * n_g;
        for (std::size_t b = 0; b < n_e; ++b) {
          row[static_cast<std::size_t>(cluster[b])] += t[a * n_e + b];
        }
      }
      gpu_of_cluster = best_assignment(affinity, G);
    }
    std::vector<int> phy2log(n_g * static_cast<std::size_t>(in.slots_per_gpu), -1);
    std::vector<int> used(n_g, 0);
    for (std::size_t e = 0; e < n_e; ++e) {
      const int g = gpu_of_cluster[static_cast<std::size_t>(cluster[e])];
      prev_gpu[e] = g;
      phy2log[static_cast<std::size_t>(g) * static_cast<std::size_t>(in.slots_per_gpu) +
              static_cast<std::size_t>(used[static_cast<std::size_t>(g)]++)] = static_cast<int>(e);
    }
    p.layers.push_back(make_layer_placement(E, G, in.slots_per_gpu, std::move(phy2log)));
  }
  return p;
}

}  // namespace epsim::policies
