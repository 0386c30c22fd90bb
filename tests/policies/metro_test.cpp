// SPDX-License-Identifier: Apache-2.0
// metro token routing (policies/metro/metro_routing.hpp) and its exact solver (policies/metro/min_activated_exact.hpp):
// the exact optimum against brute force, the greedy against the exact one, the greedy's order by hand,
// phase selection, the registry entry, and metro against even split over a decode trace.
#include <toml++/toml.h>
#include <algorithm>
#include <boost/random/discrete_distribution.hpp>
#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <boost/random/uniform_real_distribution.hpp>
#include <catch2/catch.hpp>
#include <climits>
#include <cmath>
#include <numeric>

#include "core/error.hpp"
#include "policies/eplb/eplb.hpp"
#include "policies/even_routing.hpp"
#include "policies/metro/metro_routing.hpp"
#include "policies/metro/min_activated_exact.hpp"
#include "policies/registry.hpp"
#include "tests/support/random_placement.hpp"

using namespace epsim::policies;
using Catch::Contains;
using Rng = boost::random::mt19937;

namespace {

int uniform(Rng& rng, int lo, int hi) {
  return boost::random::uniform_int_distribution<int>(lo, hi)(rng);
}

// Every expert once, the other slots random experts or empty (-1), shuffled over the slots: experts get
// 1..several replicas, sometimes two on one GPU.
LayerPlacement random_placement(Rng& rng, int experts, int gpus, int slots_per_gpu) {
  return epsim::test::random_placement(rng, experts, gpus, slots_per_gpu);
}

// About a quarter of the experts idle, the others 1..20 tokens.
std::vector<std::int32_t> random_tokens(Rng& rng, int experts) {
  std::vector<std::int32_t> t(static_cast<std::size_t>(experts));
  for (auto& n : t) {
    n = uniform(rng, 0, 3) == 0 ? 0 : uniform(rng, 1, 20);
  }
  return t;
}

// The optimum by enumerating every replica choice of every active expert.
int brute_force(const std::vector<std::int32_t>& tokens, const LayerPlacement& p) {
  std::vector<int> active;
  for (int e = 0; e < p.num_experts; ++e) {
    if (tokens[static_cast<std::size_t>(e)] > 0) {
      active.push_back(e);
    }
  }
  std::vector<int> choice(active.size(), 0);
  std::vector<int> count(static_cast<std::size_t>(p.num_gpus));
  int best = INT_MAX;
  while (true) {
    std::fill(count.begin(), count.end(), 0);
    for (std::size_t i = 0; i < active.size(); ++i) {
      ++count[static_cast<std::size_t>(p.gpu_of_slot(p.replicas(active[i])[static_cast<std::size_t>(choice[i])]))];
    }
    best = std::min(best, active.empty() ? 0 : *std::max_element(count.begin(), count.end()));
    std::size_t i = 0;
    for (; i < active.size(); ++i) {  // odometer over the choices
      if (++choice[i] < p.logcnt[static_cast<std::size_t>(active[i])]) {
        break;
      }
      choice[i] = 0;
    }
    if (i == active.size()) {
      return best;
    }
  }
}

RoutedLoad route(RoutingPolicy& policy, const std::vector<std::int32_t>& tokens, const LayerPlacement& p,
                 std::int64_t prefill_tokens = 0, std::int64_t decode_tokens = 1) {
  RoutedLoad out{std::vector<std::int32_t>(static_cast<std::size_t>(p.num_slots()), -1), false};
  policy.route(StepLayerLoad{tokens, prefill_tokens, decode_tokens}, p, out);
  return out;
}

// Every expert's tokens land, all of them on one of its replicas (none for an idle expert).
void require_one_replica_each(const std::vector<std::int32_t>& tokens, const LayerPlacement& p, const RoutedLoad& r) {
  std::int64_t routed = 0;
  for (int e = 0; e < p.num_experts; ++e) {
    const std::int32_t n = tokens[static_cast<std::size_t>(e)];
    int used = 0;
    for (const int s : p.replicas(e)) {
      const std::int32_t got = r.slot_tokens[static_cast<std::size_t>(s)];
      REQUIRE((got == 0 || got == n));
      used += got > 0 ? 1 : 0;
      routed += got;
    }
    REQUIRE(used == (n > 0 ? 1 : 0));
  }
  // Nothing anywhere else (empty slots included).
  REQUIRE(std::accumulate(r.slot_tokens.begin(), r.slot_tokens.end(), std::int64_t{0}) == routed);
  REQUIRE(routed == std::accumulate(tokens.begin(), tokens.end(), std::int64_t{0}));
}

MetroRouting metro(MetroConfig::Mode mode, MetroConfig::Phases phases = MetroConfig::Phases::decode) {
  MetroConfig c;
  c.mode = mode;
  c.phases = phases;
  return MetroRouting(c);
}

// A decode step: `tokens` tokens, each picking `top_k` distinct experts drawn by `weights`.
std::vector<std::int32_t> zipf_decode_step(Rng& rng, const std::vector<double>& weights, int tokens, int top_k) {
  boost::random::discrete_distribution<int, double> pick(weights.begin(), weights.end());
  std::vector<std::int32_t> load(weights.size(), 0);
  std::vector<int> chosen;
  for (int t = 0; t < tokens; ++t) {
    chosen.clear();
    while (static_cast<int>(chosen.size()) < top_k) {
      const int e = pick(rng);
      if (std::find(chosen.begin(), chosen.end(), e) == chosen.end()) {
        chosen.push_back(e);
        ++load[static_cast<std::size_t>(e)];
      }
    }
  }
  return load;
}

// Zipf(s) weights over `experts`, on a random permutation (the hot set is not experts 0, 1, ...).
std::vector<double> zipf_weights(Rng& rng, int experts, double s) {
  std::vector<int> perm(static_cast<std::size_t>(experts));
  std::iota(perm.begin(), perm.end(), 0);
  for (int i = experts - 1; i > 0; --i) {
    std::swap(perm[static_cast<std::size_t>(i)], perm[static_cast<std::size_t>(uniform(rng, 0, i))]);
  }
  std::vector<double> w(static_cast<std::size_t>(experts));
  for (int r = 0; r < experts; ++r) {
    w[static_cast<std::size_t>(perm[static_cast<std::size_t>(r)])] = 1.0 / std::pow(r + 1.0, s);
  }
  return w;
}

// EPLB (global) on the expected loads: the redundant replicas go to the hottest experts.
LayerPlacement eplb_placement(const std::vector<double>& expected, int gpus, int slots) {
  const auto experts = static_cast<int>(expected.size());
  const eplb::Result r = eplb::rebalance_experts(expected, 1, experts, slots, 1, 1, gpus);
  return make_layer_placement(experts, gpus, slots / gpus, r.phy2log, r.phyrank);
}

}  // namespace

TEST_CASE("metro exact equals brute force on small random instances") {
  Rng rng(7);
  MinActivatedExact exact;
  MetroRouting exact_routing = metro(MetroConfig::Mode::exact);
  for (int i = 0; i < 400; ++i) {
    const int experts = uniform(rng, 6, 8);
    const int gpus = uniform(rng, 2, 4);
    const int slots = (experts + gpus - 1) / gpus + uniform(rng, 0, 2);
    const LayerPlacement p = random_placement(rng, experts, gpus, slots);
    const std::vector<std::int32_t> tokens = random_tokens(rng, experts);
    const int best = brute_force(tokens, p);
    INFO("instance " << i);
    REQUIRE(exact.solve(tokens, p) == best);
    // The assignment it returns achieves it, one replica of each active expert.
    std::vector<std::int32_t> slot_tokens(static_cast<std::size_t>(p.num_slots()), 0);
    for (int e = 0; e < experts; ++e) {
      const int s = exact.expert_slot()[static_cast<std::size_t>(e)];
      REQUIRE((s >= 0) == (tokens[static_cast<std::size_t>(e)] > 0));
      if (s >= 0) {
        REQUIRE(p.phy2log[static_cast<std::size_t>(s)] == e);
        slot_tokens[static_cast<std::size_t>(s)] = tokens[static_cast<std::size_t>(e)];
      }
    }
    REQUIRE(max_activated_per_gpu(p, slot_tokens) == best);
    // Exact mode of the policy routes to the optimum.
    const RoutedLoad r = route(exact_routing, tokens, p);
    require_one_replica_each(tokens, p, r);
    REQUIRE(max_activated_per_gpu(p, r.slot_tokens) == best);
  }
}

TEST_CASE("metro greedy is within one of exact on random instances") {
  Rng rng(11);
  MinActivatedExact exact;
  MetroRouting greedy = metro(MetroConfig::Mode::greedy);
  int equal = 0;
  const int n = 500;
  for (int i = 0; i < n; ++i) {
    const int experts = uniform(rng, 6, 64);
    const int gpus = uniform(rng, 2, 8);
    const int slots = (experts + gpus - 1) / gpus + uniform(rng, 0, 3);
    const LayerPlacement p = random_placement(rng, experts, gpus, slots);
    const std::vector<std::int32_t> tokens = random_tokens(rng, experts);
    const RoutedLoad r = route(greedy, tokens, p);
    require_one_replica_each(tokens, p, r);
    const int g = max_activated_per_gpu(p, r.slot_tokens);
    const int best = exact.solve(tokens, p, g);  // the greedy's value must be feasible, else this throws
    INFO("instance " << i);
    REQUIRE(g >= best);
    REQUIRE(g <= best + 1);
    equal += g == best ? 1 : 0;
  }
  // Most random instances are solved exactly (460 of 500 with this seed).
  REQUIRE(equal >= n * 9 / 10);
}

TEST_CASE("metro greedy is near-optimal on skewed decode instances") {
  // The paper's Fig. 8 reports metro's max activated experts per GPU per decode batch within a few
  // percent of the optimum; the exact figure is lost from our copy of the text, so we check a stated
  // bound: the mean ratio greedy / exact <= 1.10 and never more than one above it, on Zipf-skewed
  // decode batches (64 tokens x top-8 over 128 experts, 16 GPUs with 32 redundant slots from EPLB).
  Rng rng(3);
  MinActivatedExact exact;
  MetroRouting greedy = metro(MetroConfig::Mode::greedy);
  double ratio_sum = 0.0;
  int steps = 0;
  for (const double s : {0.6, 1.0, 1.4}) {
    const std::vector<double> w = zipf_weights(rng, 128, s);
    const double total = std::accumulate(w.begin(), w.end(), 0.0);
    std::vector<double> expected(w.size());
    std::transform(w.begin(), w.end(), expected.begin(), [&](double x) { return x / total * 64 * 8; });
    const LayerPlacement p = eplb_placement(expected, 16, 160);
    for (int step = 0; step < 100; ++step) {
      const std::vector<std::int32_t> tokens = zipf_decode_step(rng, w, 64, 8);
      const RoutedLoad r = route(greedy, tokens, p);
      require_one_replica_each(tokens, p, r);
      const int g = max_activated_per_gpu(p, r.slot_tokens);
      const int best = exact.solve(tokens, p, g);
      REQUIRE(g <= best + 1);
      ratio_sum += static_cast<double>(g) / best;
      ++steps;
    }
  }
  const double mean_ratio = ratio_sum / steps;
  INFO("mean greedy / exact = " << mean_ratio);
  REQUIRE(mean_ratio <= 1.10);  // measured: 1.0035 with this seed
}

TEST_CASE("metro greedy order: forced experts first, then by id to the fewest activated, fewest tokens, lowest GPU") {
  // 3 GPUs x 3 slots. Expert 0 on GPUs 0, 1; expert 1 on GPUs 0, 2; expert 2 on GPUs 1, 2; experts 3, 4,
  // 5 only on GPU 0, 1, 2 (forced).
  //   slot: 0  1  2 | 3  4  5 | 6  7  8
  const LayerPlacement p = make_layer_placement(6, 3, 3, {0, 1, 3, 0, 2, 4, 2, 1, 5});
  const std::vector<std::int32_t> tokens{5, 9, 4, 1, 2, 0};
  MetroRouting greedy = metro(MetroConfig::Mode::greedy);
  const RoutedLoad r = route(greedy, tokens, p);
  // Forced: expert 3 -> GPU 0 (1 act, 1 tok), expert 4 -> GPU 1 (1 act, 2 tok); expert 5 idle.
  // Expert 0 (GPUs 0, 1): both 1 activated, GPU 0 has fewer tokens -> slot 0. GPU 0: 2 act, 6 tok.
  // Expert 1 (GPUs 0, 2): GPU 2 has 0 activated -> slot 7. GPU 2: 1 act, 9 tok.
  // Expert 2 (GPUs 1, 2, slots 4 and 6): both 1 activated; GPU 1 has 2 tokens < 9 -> slot 4.
  REQUIRE(r.slot_tokens == std::vector<std::int32_t>{5, 0, 1, 0, 4, 2, 0, 9, 0});
  REQUIRE(r.all_gather_dispatch);

  // Ties on activated and tokens go to the lowest GPU; two replicas on one GPU use its lowest slot.
  const LayerPlacement q = make_layer_placement(2, 2, 2, {1, 0, 1, 0});
  const RoutedLoad t = route(greedy, {3, 3}, q);
  // Expert 0 (slots 1, 3): tie -> GPU 0, slot 1. Expert 1 (slots 0, 2): GPU 1 has 0 activated -> slot 2.
  REQUIRE(t.slot_tokens == std::vector<std::int32_t>{0, 3, 3, 0});
  const LayerPlacement same_gpu = make_layer_placement(2, 2, 2, {1, 1, 0, 0});
  REQUIRE(route(greedy, {0, 6}, same_gpu).slot_tokens == std::vector<std::int32_t>{6, 0, 0, 0});
}

TEST_CASE("metro leaves steps with prefill to even split under phases decode") {
  Rng rng(5);
  EvenRouting even;
  MetroRouting by_default = metro(MetroConfig::Mode::greedy);
  MetroRouting exact = metro(MetroConfig::Mode::exact);
  MetroRouting all = metro(MetroConfig::Mode::greedy, MetroConfig::Phases::all);
  for (int i = 0; i < 50; ++i) {
    const LayerPlacement p = random_placement(rng, 16, 4, 6);
    const std::vector<std::int32_t> tokens = random_tokens(rng, 16);
    const RoutedLoad ref = route(even, tokens, p, 100, 20);
    REQUIRE_FALSE(ref.all_gather_dispatch);
    // A mixed step, a pure prefill step and an empty one are not decode steps.
    for (const auto& [prefill, decode] : {std::pair{100, 20}, std::pair{64, 0}, std::pair{0, 0}}) {
      for (MetroRouting* m : {&by_default, &exact}) {
        const RoutedLoad r = route(*m, tokens, p, prefill, decode);
        REQUIRE(r.slot_tokens == ref.slot_tokens);
        REQUIRE_FALSE(r.all_gather_dispatch);
      }
    }
    // A decode step is metro's, and phases = "all" takes the prefill steps too.
    const RoutedLoad decode_step = route(by_default, tokens, p, 0, 32);
    REQUIRE(decode_step.all_gather_dispatch);
    require_one_replica_each(tokens, p, decode_step);
    const RoutedLoad prefill_step = route(all, tokens, p, 100, 0);
    REQUIRE(prefill_step.all_gather_dispatch);
    REQUIRE(prefill_step.slot_tokens == decode_step.slot_tokens);
  }
}

TEST_CASE("metro activates no more experts per GPU than even split on a decode trace") {
  // 64..128 decode tokens x top-8 over 256 experts on 32 GPUs with 64 redundant slots placed by EPLB,
  // Zipf-skewed with a hot set per layer. The claim checked for every step is on the max over GPUs:
  // even split activates a superset of some one-replica-per-expert routing, so the optimum is never
  // above it, and the greedy stays there in practice. Per GPU it can legitimately fail: an expert with
  // fewer tokens than replicas is activated by even split only on its low ranks, and metro may choose a
  // higher rank on a GPU even split left idle; we count those GPUs but do not require none.
  Rng rng(2024);
  EvenRouting even;
  MetroRouting greedy = metro(MetroConfig::Mode::greedy);
  int steps = 0;
  int gpu_steps_above = 0;
  int strictly_lower = 0;
  for (int layer = 0; layer < 4; ++layer) {
    const double s = 0.8 + 0.2 * layer;
    const std::vector<double> w = zipf_weights(rng, 256, s);
    const double total = std::accumulate(w.begin(), w.end(), 0.0);
    std::vector<double> expected(w.size());
    std::transform(w.begin(), w.end(), expected.begin(), [&](double x) { return x / total * 96 * 8; });
    const LayerPlacement p = eplb_placement(expected, 32, 320);
    for (int step = 0; step < 100; ++step) {
      const std::vector<std::int32_t> tokens = zipf_decode_step(rng, w, uniform(rng, 64, 128), 8);
      const RoutedLoad m = route(greedy, tokens, p);
      const RoutedLoad e = route(even, tokens, p);
      require_one_replica_each(tokens, p, m);
      const int metro_max = max_activated_per_gpu(p, m.slot_tokens);
      const int even_max = max_activated_per_gpu(p, e.slot_tokens);
      INFO("layer " << layer << " step " << step);
      REQUIRE(metro_max <= even_max);
      strictly_lower += metro_max < even_max ? 1 : 0;
      for (int g = 0; g < p.num_gpus; ++g) {
        int am = 0;
        int ae = 0;
        for (int sl = g * p.slots_per_gpu; sl < (g + 1) * p.slots_per_gpu; ++sl) {
          am += m.slot_tokens[static_cast<std::size_t>(sl)] > 0 ? 1 : 0;
          ae += e.slot_tokens[static_cast<std::size_t>(sl)] > 0 ? 1 : 0;
        }
        gpu_steps_above += am > ae ? 1 : 0;
      }
      ++steps;
    }
  }
  INFO("steps with a lower max: " << strictly_lower << " of " << steps << "; GPU-steps where metro activates more: "
                                  << gpu_steps_above << " of " << steps * 32);
  // Measured with this seed: a strictly lower max in 400 of 400 steps, one GPU-step of 12,800 above.
  REQUIRE(strictly_lower > steps / 2);  // the point of metro: usually strictly fewer
  REQUIRE(gpu_steps_above < steps * 32 / 100);
}

TEST_CASE("the exact solver rebuilds its network when a placement changes and rejects infeasible bounds") {
  LayerPlacement p = make_layer_placement(4, 2, 3, {0, 1, 2, 3, 0, 1});
  MinActivatedExact exact;
  const std::vector<std::int32_t> tokens{1, 1, 1, 1};
  // 2 is forced on GPU 0 and 3 on GPU 1; 0 and 1 split over them: 2 per GPU.
  REQUIRE(exact.solve(tokens, p) == 2);
  REQUIRE(exact.probes() >= 1);
  // Same object, new content: 0, 1 and 2 only on GPU 0 -> 3 (the old network would answer 2).
  p = make_layer_placement(4, 2, 3, {0, 1, 2, 3, 3, 3});
  REQUIRE(exact.solve(tokens, p) == 3);
  REQUIRE(exact.expert_slot()[3] == 3);  // the lowest of expert 3's three slots on GPU 1
  REQUIRE(exact.solve(std::vector<std::int32_t>{0, 0, 1, 1}, p) == 1);
  REQUIRE(exact.solve(std::vector<std::int32_t>{0, 0, 0, 0}, p) == 0);
  REQUIRE_THROWS_AS(exact.solve(tokens, p, 1), epsim::core::Error);
}

TEST_CASE("metro in the routing registry: mode and phases, validated") {
  REQUIRE(routing_registry().find("metro") != nullptr);
  const auto make = [](std::string_view toml_text) {
    const toml::table tab = toml::parse(toml_text);
    epsim::core::ParamTable t({epsim::core::ParamLayer{&tab, "f.toml"}}, "policy.routing_options");
    return routing_registry().create("metro", t);
  };
  const auto defaults = make("");
  const auto* m = dynamic_cast<const MetroRouting*>(defaults.get());
  REQUIRE(m != nullptr);
  REQUIRE(m->config().mode == MetroConfig::Mode::greedy);
  REQUIRE(m->config().phases == MetroConfig::Phases::decode);
  const auto set = make("mode = \"exact\"\nphases = \"all\"\n");
  const auto* e = dynamic_cast<const MetroRouting*>(set.get());
  REQUIRE(e->config().mode == MetroConfig::Mode::exact);
  REQUIRE(e->config().phases == MetroConfig::Phases::all);
  REQUIRE_THROWS_WITH(make("mode = \"optimal\"\n"),
                      Contains("policy.routing_options.mode") && Contains("valid values are: greedy, exact"));
  REQUIRE_THROWS_WITH(make("phases = \"prefill\"\n"), Contains("valid values are: decode, all"));
  REQUIRE_THROWS_WITH(make("mdoe = \"exact\"\n"), Contains("unknown key"));
  const auto docs = routing_registry().docs(*routing_registry().find("metro"));
  REQUIRE(docs.size() == 2);
}
