// SPDX-License-Identifier: Apache-2.0
// metro routing time per step-layer, greedy and exact, for DeepSeek-V3 shapes: 256 experts + 64
// redundant slots (320, 5 per GPU) on 64 GPUs (8 nodes x 8), EPLB placement on the expected load (the
// redundant replicas go to the hottest experts). Decode steps of 64 and 256 tokens x top-8, Zipf-skewed
// over a different hot set per layer. Also reports the greedy's gap to the optimum and even split's max.
#include <fmt/format.h>

#include <algorithm>
#include <boost/random/discrete_distribution.hpp>
#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <chrono>
#include <cmath>
#include <numeric>

#include "policies/eplb/eplb.hpp"
#include "policies/even_routing.hpp"
#include "policies/metro/metro_routing.hpp"

using namespace epsim;
using Rng = boost::random::mt19937;

namespace {

constexpr int k_experts = 256;
constexpr int k_slots = 320;
constexpr int k_gpus = 64;
constexpr int k_top_k = 8;

struct Layer {
  policies::LayerPlacement placement;
  std::vector<std::vector<std::int32_t>> steps;  // tokens per expert
};

Layer make_layer(Rng& rng, double zipf, int tokens, int steps) {
  std::vector<int> perm(k_experts);
  std::iota(perm.begin(), perm.end(), 0);
  for (int i = k_experts - 1; i > 0; --i) {
    std::swap(perm[static_cast<std::size_t>(i)],
              perm[static_cast<std::size_t>(boost::random::uniform_int_distribution<int>(0, i)(rng))]);
  }
  std::vector<double> w(k_experts);
  for (int r = 0; r < k_experts; ++r) {
    w[static_cast<std::size_t>(perm[static_cast<std::size_t>(r)])] = 1.0 / std::pow(r + 1.0, zipf);
  }
  const auto r = policies::eplb::rebalance_experts(w, 1, k_experts, k_slots, 8, 8, k_gpus);
  Layer l{policies::make_layer_placement(k_experts, k_gpus, k_slots / k_gpus, r.phy2log, r.phyrank), {}};
  boost::random::discrete_distribution<int, double> pick(w.begin(), w.end());
  for (int s = 0; s < steps; ++s) {
    std::vector<std::int32_t> load(k_experts, 0);
    for (int t = 0; t < tokens; ++t) {
      int chosen[k_top_k];
      int n = 0;
      while (n < k_top_k) {
        const int e = pick(rng);
        if (std::find(chosen, chosen + n, e) == chosen + n) {
          chosen[n++] = e;
          ++load[static_cast<std::size_t>(e)];
        }
      }
    }
    l.steps.push_back(std::move(load));
  }
  return l;
}

// Mean microseconds per route() over every step-layer, `reps` passes; `max_activated` gets each one's
// max activated experts per GPU (from the last pass).
double time_routing(policies::RoutingPolicy& policy, const std::vector<Layer>& layers, int tokens, int reps,
                    std::vector<int>& max_activated) {
  policies::RoutedLoad out{std::vector<std::int32_t>(k_slots, 0), false};
  max_activated.clear();
  const auto t0 = std::chrono::steady_clock::now();
  int calls = 0;
  for (int rep = 0; rep < reps; ++rep) {
    for (const Layer& l : layers) {
      for (const auto& load : l.steps) {
        policy.route(policies::StepLayerLoad{load, 0, tokens}, l.placement, out);
        ++calls;
        if (rep == reps - 1) {
          max_activated.push_back(policies::max_activated_per_gpu(l.placement, out.slot_tokens));
        }
      }
    }
  }
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / calls;
}

}  // namespace

int main() {
  fmt::print(
      "metro, DeepSeek-V3 shapes: 256 experts, 320 slots (64 redundant, EPLB) on 64 GPUs; decode steps x "
      "top-{}\n",
      k_top_k);
  fmt::print("{:>6} {:>5} {:>10} {:>9} {:>7} {:>7} {:>8} {:>7} {:>6} {:>8}\n", "tokens", "zipf", "greedy_us",
             "exact_us", "greedy", "exact", "gap_mean", "gap_max", "even", "even_us");
  for (const int tokens : {64, 256}) {
    for (const double zipf : {0.6, 1.0, 1.4}) {
      Rng rng(42);
      std::vector<Layer> layers;
      layers.reserve(8);
      for (int l = 0; l < 8; ++l) {
        layers.push_back(make_layer(rng, zipf, tokens, 25));
      }
      policies::MetroConfig greedy_cfg;
      greedy_cfg.phases = policies::MetroConfig::Phases::all;
      policies::MetroConfig exact_cfg = greedy_cfg;
      exact_cfg.mode = policies::MetroConfig::Mode::exact;
      policies::MetroRouting greedy(greedy_cfg);
      policies::MetroRouting exact(exact_cfg);
      policies::EvenRouting even;
      std::vector<int> g;
      std::vector<int> x;
      std::vector<int> v;
      const double greedy_us = time_routing(greedy, layers, tokens, 200, g);
      const double exact_us = time_routing(exact, layers, tokens, 5, x);
      const double even_us = time_routing(even, layers, tokens, 200, v);
      double gap_sum = 0.0;
      int gap_max = 0;
      for (std::size_t i = 0; i < g.size(); ++i) {
        gap_sum += g[i] - x[i];
        gap_max = std::max(gap_max, g[i] - x[i]);
      }
      const auto mean = [](const std::vector<int>& a) {
        return std::accumulate(a.begin(), a.end(), 0.0) / static_cast<double>(a.size());
      };
      fmt::print("{:>6} {:>5.1f} {:>10.2f} {:>9.1f} {:>7.2f} {:>7.2f} {:>8.3f} {:>7} {:>6.2f} {:>8.2f}\n", tokens, zipf,
                 greedy_us, exact_us, mean(g), mean(x), gap_sum / static_cast<double>(g.size()), gap_max, mean(v),
                 even_us);
    }
  }
  fmt::print(
      "us: per step-layer (exact includes the greedy it starts from); greedy / exact / even: mean max "
      "activated experts per GPU over 8 layers x 25 steps; gap = greedy - exact; even_us: even split's time\n");
  return 0;
}
