// SPDX-License-Identifier: Apache-2.0
// DIRECTOR (paper 002): the latency model, the LP relaxation against brute force over every placement
// on tiny instances, the rounding (capacity, LP bound <= rounded objective), the routing predictor.
#include <toml++/toml.h>
#include <algorithm>
#include <boost/random/uniform_int_distribution.hpp>
#include <boost/random/uniform_real_distribution.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "core/params.hpp"
#include "core/random_streams.hpp"
#include "policies/director/director_lp.hpp"
#include "policies/director/director_model.hpp"
#include "policies/director/director_placement.hpp"
#include "policies/director/director_rounding.hpp"
#include "policies/director/routing_predictor.hpp"
#include "policies/registry.hpp"
#include "tests/support/assignments.hpp"

using namespace epsim;
using namespace epsim::policies;

namespace {

// Convex sampled curves: a launch cost then slopes that grow (so the LP's hull is the curve itself).
std::shared_ptr<const CostCurves> convex_curves(int gpus, core::Rng& rng) {
  boost::random::uniform_real_distribution<double> speed(0.8, 1.25);
  std::vector<std::vector<double>> n(static_cast<std::size_t>(gpus));
  std::vector<std::vector<double>> ns(static_cast<std::size_t>(gpus));
  for (int g = 0; g < gpus; ++g) {
    const double s = speed(rng);
    for (int k = 1; k <= 8; ++k) {
      const double t = 25.0 * k;
      n[static_cast<std::size_t>(g)].push_back(t);
      ns[static_cast<std::size_t>(g)].push_back((t + 0.004 * t * t) / s);
    }
  }
  return std::make_shared<const CostCurves>(std::move(n), std::move(ns));
}

struct Instance {
  std::shared_ptr<const CostCurves> curves;
  DirectorProblem p;
};

Instance random_instance(int layers, int experts, int gpus, int capacity, core::Rng& rng, double max_tokens = 40.0) {
  Instance in;
  in.curves = convex_curves(gpus, rng);
  in.p.layers = layers;
  in.p.experts = experts;
  in.p.gpus = gpus;
  in.p.capacity = capacity;
  in.p.curves = in.curves.get();
  in.p.bytes_per_token = 1000.0;
  boost::random::uniform_real_distribution<double> tokens(0.0, max_tokens);
  boost::random::uniform_real_distribution<double> bw(5.0, 50.0);
  for (int k = 0; k < layers * gpus * experts; ++k) {
    in.p.workload.push_back(std::floor(tokens(rng)));
  }
  for (int k = 0; k < gpus * gpus; ++k) {
    in.p.link_bytes_per_ns.push_back(bw(rng));
  }
  return in;
}

// Minimum of Eq. 5 over every placement within C_max (layers are independent: the sum of their minima).
double brute_force(const DirectorProblem& p) {
  double total = 0.0;
  for (int l = 0; l < p.layers; ++l) {
    double best = std::numeric_limits<double>::infinity();
    epsim::test::for_each_assignment(p.experts, p.gpus, p.capacity, [&](const std::vector<int>& gpu) {
      best = std::min(best, director_layer_cost(p, l, gpu).total_ns());
    });
    total += best;
  }
  return total;
}

void require_capacity(const DirectorProblem& p, const std::vector<int>& gpu_of) {
  REQUIRE(gpu_of.size() == static_cast<std::size_t>(p.layers * p.experts));
  for (int l = 0; l < p.layers; ++l) {
    std::vector<int> used(static_cast<std::size_t>(p.gpus), 0);
    for (int i = 0; i < p.experts; ++i) {
      const int g = gpu_of[static_cast<std::size_t>(l * p.experts + i)];
      REQUIRE(g >= 0);
      REQUIRE(g < p.gpus);
      ++used[static_cast<std::size_t>(g)];
    }
    REQUIRE(*std::max_element(used.begin(), used.end()) <= p.capacity);
  }
}

}  // namespace

TEST_CASE("DIRECTOR: Eq. 1-4 by hand on two GPUs") {
  // 1 layer, 2 experts, 2 GPUs. GPU 0 holds 3 tokens for expert 0 and 1 for expert 1; GPU 1 holds 2 for
  // expert 1. Linear curves 10 ns per token; d = 100 bytes; 10 bytes/ns each way -> 10 ns per token.
  const auto curves = std::make_shared<const CostCurves>(std::vector<std::vector<double>>{{1.0}, {1.0}},
                                                         std::vector<std::vector<double>>{{10.0}, {10.0}});
  DirectorProblem p;
  p.layers = 1;
  p.experts = 2;
  p.gpus = 2;
  p.capacity = 2;
  p.workload = {3, 1, 0, 2};
  p.link_bytes_per_ns = {1, 10, 10, 1};
  p.bytes_per_token = 100.0;
  p.curves = curves.get();
  // Expert 0 on GPU 0, expert 1 on GPU 1: lambda = 3, 3 -> 30 ns; GPU 0 sends 1 token -> 10 ns.
  const DirectorCost a = director_cost(p, std::vector<int>{0, 1});
  CHECK(a.comp_ns == Approx(30.0));
  CHECK(a.comm_ns == Approx(10.0));
  // Both on GPU 0: lambda = 6 -> 60 ns; GPU 1 sends its 2 tokens -> 20 ns.
  CHECK(director_cost(p, std::vector<int>{0, 0}).total_ns() == Approx(80.0));
  // With C_g(n, a) = 10 n + 100 a, a GPU pays for the experts it expects to activate: each expert has 3
  // tokens a pass, so it activates with p = 1 - e^-3.
  const auto aware = std::make_shared<const CostCurves>(
      2, CostCurves::ExactActivated([](int, double n, double act) { return 10.0 * n + 100.0 * act; }));
  p.curves = aware.get();
  const double on = 1.0 - std::exp(-3.0);
  CHECK(director_cost(p, std::vector<int>{0, 1}).comp_ns == Approx(30.0 + 100.0 * on));
  CHECK(director_cost(p, std::vector<int>{0, 0}).comp_ns == Approx(60.0 + 200.0 * on));
  // C_max = 1 forbids it.
  p.capacity = 1;
  CHECK_THROWS_AS(director_cost(p, std::vector<int>{0, 0}), core::Error);
}

TEST_CASE("DIRECTOR: LP, rounding and brute force agree on tiny instances (3 experts x 2 GPUs x 2 layers)") {
  core::Rng rng(11);
  int rounded_optimal = 0;
  const int runs = 60;
  for (int run = 0; run < runs; ++run) {
    const Instance in = random_instance(2, 3, 2, 2, rng);
    const double best = brute_force(in.p);
    const DirectorLpResult direct = solve_director_lp(in.p, {.mode = DirectorLpOptions::Mode::direct});
    const DirectorLpResult bisect = solve_director_lp(in.p, {.mode = DirectorLpOptions::Mode::bisect, .epsilon = 1e-6});
    CHECK(direct.bound_ns <= best * (1.0 + 1e-9));
    CHECK(bisect.bound_ns <= direct.bound_ns * (1.0 + 1e-9));
    CHECK(bisect.budget_ns >= direct.bound_ns * (1.0 - 1e-9));
    CHECK(bisect.budget_ns <= direct.bound_ns * (1.0 + 2e-6) + 1e-9);
    core::Rng r2(static_cast<std::uint64_t>(run));
    const DirectorRoundingResult r = round_director(in.p, bisect, {.trials = 8}, r2);
    require_capacity(in.p, r.gpu_of);
    CHECK(r.cost.total_ns() >= best * (1.0 - 1e-9));
    CHECK(r.cost.total_ns() >= bisect.bound_ns * (1.0 - 1e-9));
    rounded_optimal += r.cost.total_ns() <= best * (1.0 + 1e-9) ? 1 : 0;
  }
  // The relaxation may split an expert, so LP < optimum is allowed; the rounded placement equals the
  // optimum on every instance. (Before polish exchanged whole GPUs' experts it missed one of the 60:
  // the walk landed on the optimum's mirror, which no improving move or swap reaches.)
  CHECK(rounded_optimal == runs);
}

TEST_CASE("DIRECTOR with a migration term: moves cost move_ns each, LP and rounding weigh them exactly") {
  core::Rng rng(21);
  int kept_all = 0;
  for (int run = 0; run < 40; ++run) {
    Instance in = random_instance(2, 3, 2, 2, rng);
    in.p.current = {1, 0, 1, 0, 1, 1};
    // By hand: the current placement pays nothing; moving one expert of layer 0 pays move_ns once.
    in.p.move_ns = 7.0;
    std::vector<int> one_moved{0, 0, 1, 0, 1, 1};
    const DirectorCost free_c = director_layer_cost(in.p, 0, std::span<const int>(in.p.current).subspan(0, 3));
    CHECK(free_c.move_ns == 0.0);
    CHECK(director_layer_cost(in.p, 0, std::span<const int>(one_moved).subspan(0, 3)).move_ns == 7.0);
    CHECK(director_cost(in.p, one_moved).move_ns == 7.0);
    // Moves priced somewhere between free and prohibitive: the LP still bounds the optimum over every
    // placement (moves included), and rounding plus polish find it.
    boost::random::uniform_real_distribution<double> price(0.0, 400.0);
    in.p.move_ns = price(rng);
    const double best = brute_force(in.p);
    const DirectorLpResult direct = solve_director_lp(in.p, {.mode = DirectorLpOptions::Mode::direct});
    const DirectorLpResult bisect = solve_director_lp(in.p, {.mode = DirectorLpOptions::Mode::bisect, .epsilon = 1e-6});
    CHECK(direct.bound_ns <= best * (1.0 + 1e-9));
    CHECK(bisect.bound_ns <= direct.bound_ns * (1.0 + 1e-9));
    CHECK(bisect.budget_ns >= direct.bound_ns * (1.0 - 1e-9));
    core::Rng r2(static_cast<std::uint64_t>(run));
    const DirectorRoundingResult r = round_director(in.p, bisect, {.trials = 8}, r2);
    require_capacity(in.p, r.gpu_of);
    CHECK(r.cost.total_ns() == Approx(best).epsilon(1e-9));
    // Prohibitive moves: the current placement is the answer.
    in.p.move_ns = 1e9;
    const DirectorRoundingResult keep =
        round_director(in.p, solve_director_lp(in.p, {.mode = DirectorLpOptions::Mode::direct}), {.trials = 8}, r2);
    kept_all += keep.gpu_of == in.p.current ? 1 : 0;
  }
  CHECK(kept_all == 40);
}

TEST_CASE("DIRECTOR: when every expert's tokens sit on one GPU the LP is integral and equals brute force", "[slow]") {
  // Communication dominates (slow links, cheap compute): the optimum hosts each expert where its tokens
  // are, and the relaxation cannot do better, so LP = rounded = brute force exactly.
  core::Rng rng(3);
  for (int run = 0; run < 20; ++run) {
    Instance in = random_instance(2, 3, 2, 2, rng);
    boost::random::uniform_int_distribution<int> home(0, 1);
    for (int l = 0; l < 2; ++l) {
      const int h0 = run % 2;  // experts 0, 1 live on GPU h0, expert 2 on the other (fits C_max = 2)
      for (int i = 0; i < 3; ++i) {
        const int h = i < 2 ? h0 : 1 - h0;
        for (int j = 0; j < 2; ++j) {
          in.p.workload[static_cast<std::size_t>((l * 2 + j) * 3 + i)] = j == h ? 10.0 + home(rng) : 0.0;
        }
      }
    }
    in.p.bytes_per_token = 1e6;
    const double best = brute_force(in.p);
    for (const DirectorLpOptions::Mode mode : {DirectorLpOptions::Mode::direct, DirectorLpOptions::Mode::bisect}) {
      const DirectorLpResult lp = solve_director_lp(in.p, {.mode = mode, .epsilon = 1e-7});
      core::Rng r2(7);
      const DirectorRoundingResult r = round_director(in.p, lp, {.trials = 1, .polish = false}, r2);
      CHECK(lp.bound_ns == Approx(best).epsilon(1e-6));
      CHECK(r.cost.total_ns() == Approx(best).epsilon(1e-9));
    }
  }
}

namespace {
// Two pass kinds from two one-pass instances of one shape: W of both, counted `w0` and `w1` times.
DirectorProblem two_passes(const DirectorProblem& a, const DirectorProblem& b, double w0, double w1) {
  DirectorProblem p = a;
  p.passes = 2;
  p.pass_weight = {w0, w1};
  p.workload.insert(p.workload.end(), b.workload.begin(), b.workload.end());
  return p;
}
}  // namespace

TEST_CASE("DIRECTOR: with pass kinds Eq. 5 is the count-weighted sum of each kind's, for every placement") {
  core::Rng rng(21);
  const Instance prefill = random_instance(2, 4, 2, 3, rng, 200.0);
  Instance decode = random_instance(2, 4, 2, 3, rng, 5.0);
  decode.p.curves = prefill.p.curves;  // one cluster
  decode.p.link_bytes_per_ns = prefill.p.link_bytes_per_ns;
  const DirectorProblem p = two_passes(prefill.p, decode.p, 1.0, 40.0);
  int placements = 0;
  epsim::test::for_each_assignment(4, 2, 3, [&](const std::vector<int>& layer) {
    std::vector<int> gpu_of = layer;
    gpu_of.insert(gpu_of.end(), layer.begin(), layer.end());
    const DirectorCost a = director_cost(prefill.p, gpu_of);
    const DirectorCost b = director_cost(decode.p, gpu_of);
    const DirectorCost both = director_cost(p, gpu_of);
    CHECK(both.comp_ns == Approx(a.comp_ns + 40.0 * b.comp_ns));
    CHECK(both.comm_ns == Approx(a.comm_ns + 40.0 * b.comm_ns));
    ++placements;
  });
  CHECK(placements == 14);  // 2^4 less the two with all four experts on one GPU
  DirectorProblem bad = p;
  bad.pass_weight = {1.0};
  CHECK_THROWS_WITH(validate(bad), Catch::Contains("one weight each"));
}

TEST_CASE("DIRECTOR: with pass kinds the LP bounds brute force and rounding finds it on tiny instances") {
  core::Rng rng(23);
  int rounded_optimal = 0;
  const int runs = 40;
  for (int run = 0; run < runs; ++run) {
    const Instance a = random_instance(2, 3, 2, 2, rng, 100.0);
    Instance b = random_instance(2, 3, 2, 2, rng, 10.0);
    b.p.link_bytes_per_ns = a.p.link_bytes_per_ns;
    DirectorProblem p = two_passes(a.p, b.p, 1.0, 8.0);
    const double best = brute_force(p);
    const DirectorLpResult direct = solve_director_lp(p, {.mode = DirectorLpOptions::Mode::direct});
    const DirectorLpResult bisect = solve_director_lp(p, {.mode = DirectorLpOptions::Mode::bisect, .epsilon = 1e-6});
    CHECK(direct.bound_ns <= best * (1.0 + 1e-9));
    CHECK(bisect.bound_ns <= direct.bound_ns * (1.0 + 1e-9));
    CHECK(bisect.budget_ns <= direct.bound_ns * (1.0 + 2e-6) + 1e-9);
    core::Rng r2(static_cast<std::uint64_t>(run));
    const DirectorRoundingResult r = round_director(p, bisect, {.trials = 8}, r2);
    require_capacity(p, r.gpu_of);
    CHECK(r.cost.total_ns() >= best * (1.0 - 1e-9));
    rounded_optimal += r.cost.total_ns() <= best * (1.0 + 1e-9) ? 1 : 0;
  }
  CHECK(rounded_optimal == runs);
}

TEST_CASE("DIRECTOR: the LP bound never exceeds the rounded objective on random instances") {
  core::Rng rng(5);
  for (int run = 0; run < 12; ++run) {
    boost::random::uniform_int_distribution<int> pick(0, 2);
    const int gpus = 2 + 2 * pick(rng);               // 2, 4, 6
    const int capacity = 2 + pick(rng);               // 2..4
    const int experts = gpus * capacity - pick(rng);  // tight or nearly
    const Instance in = random_instance(3, experts, gpus, capacity, rng, 200.0);
    const DirectorLpResult lp = solve_director_lp(
        in.p, {.mode = run % 2 ? DirectorLpOptions::Mode::direct : DirectorLpOptions::Mode::bisect, .epsilon = 1e-5});
    for (const bool polish : {false, true}) {
      core::Rng r2(static_cast<std::uint64_t>(run));
      const DirectorRoundingResult r = round_director(in.p, lp, {.trials = 2, .polish = polish}, r2);
      require_capacity(in.p, r.gpu_of);
      CHECK(lp.bound_ns <= r.cost.total_ns() * (1.0 + 1e-9));
      CHECK(r.gap >= 1.0 - 1e-9);
      CHECK(r.walk_ns >= r.cost.total_ns() * (1.0 - 1e-12));
      CHECK(r.repairs == 0);
    }
  }
}

TEST_CASE("DIRECTOR: the rounding walk ends integral within C_max from any feasible fractional point") {
  core::Rng rng(9);
  for (const auto& [experts, gpus, capacity] : std::vector<std::array<int, 3>>{{8, 4, 2}, {12, 4, 4}, {30, 6, 5}}) {
    // Uniform x = 1 / G: the most fractional point there is.
    const std::vector<double> x(static_cast<std::size_t>(experts * gpus), 1.0 / gpus);
    for (int trial = 0; trial < 20; ++trial) {
      long long micro = 0;
      int repairs = 0;
      const std::vector<int> gpu_of = round_layer_walk(x, experts, gpus, capacity, rng, &micro, nullptr, &repairs);
      std::vector<int> used(static_cast<std::size_t>(gpus), 0);
      for (const int g : gpu_of) {
        ++used[static_cast<std::size_t>(g)];
      }
      CHECK(*std::max_element(used.begin(), used.end()) <= capacity);
      CHECK(repairs == 0);
      CHECK(micro <= experts * gpus + gpus + 1);
    }
  }
}

TEST_CASE("DIRECTOR: the walk keeps marginals in expectation") {
  // Expert 0 has x = (0.7, 0.3) over 2 GPUs with room for both: GPU 0 about 70 % of the time.
  core::Rng rng(1);
  const std::vector<double> x{0.7, 0.3, 0.3, 0.7};
  int on0 = 0;
  const int n = 4000;
  for (int t = 0; t < n; ++t) {
    on0 += round_layer_walk(x, 2, 2, 2, rng)[0] == 0 ? 1 : 0;
  }
  CHECK(static_cast<double>(on0) / n == Approx(0.7).margin(0.03));
}

TEST_CASE("DIRECTOR: malformed problems are rejected with what was expected") {
  core::Rng rng(2);
  Instance in = random_instance(1, 5, 2, 2, rng);  // 2 x 2 slots < 5 experts
  CHECK_THROWS_WITH(solve_director_lp(in.p), Catch::Contains("C_max * GPUs >= experts"));
  in.p.capacity = 3;
  in.p.workload.pop_back();
  CHECK_THROWS_WITH(solve_director_lp(in.p), Catch::Contains("workload"));
}

TEST_CASE("DIRECTOR: placement policy from the registry, deterministic with a seed") {
  core::Rng rng(4);
  PlacementInput in = PlacementInput::shape(3, 16, 4, 2, 4);
  in.set_cost_curves(convex_curves(4, rng));
  boost::random::uniform_real_distribution<double> load(0.0, 100.0);
  std::vector<double> total;
  for (int k = 0; k < 3 * 16; ++k) {
    total.push_back(load(rng));
  }
  in.set_load_window(std::move(total));
  in.seed = 17;
  core::ParamTable t(std::string("director"));
  auto policy = placement_registry().create("director", t);
  REQUIRE(policy->needs().load_window);
  REQUIRE(policy->needs().cost_curves);
  const Placement a = policy->place(in);
  const Placement b = policy->place(in);
  REQUIRE(a.layers.size() == 3);
  for (std::size_t l = 0; l < 3; ++l) {
    CHECK(a.layers[l].phy2log == b.layers[l].phy2log);
    for (int e = 0; e < 16; ++e) {
      CHECK(a.layers[l].logcnt[static_cast<std::size_t>(e)] == 1);
    }
  }
  // With per-origin loads: W of one shape, and a link matrix (node 0 = GPUs 0, 1).
  std::vector<double> origin(3 * 4 * 16, 0.0);
  for (double& v : origin) {
    v = load(rng);
  }
  in.set_origin_load(origin);
  in.set_link_bandwidths(two_level_links(4, 2, 400.0, 50.0));
  CHECK(policy->place(in).layers.size() == 3);
  // A W of the wrong shape is refused where it is given, naming the input.
  origin.pop_back();
  CHECK_THROWS_WITH(in.set_origin_load(origin), Catch::Contains("origin load"));
}

TEST_CASE("DIRECTOR: offline and reactive baselines are the optimiser on summed or previous W") {
  const std::vector<std::vector<double>> batches{{1, 2, 3}, {4, 5, 6}};
  CHECK(sum_workloads(batches) == std::vector<double>{5, 7, 9});
  const std::vector<std::vector<double>> bad{{1, 2}, {1}};
  CHECK_THROWS_AS(sum_workloads(bad), core::Error);
}

namespace {

TokenRouting zipf_routing(int tokens, int layers, int experts, int gpus, int top_k, core::Rng& rng) {
  TokenRouting r;
  r.layers = layers;
  r.experts = experts;
  r.gpus = gpus;
  r.top_k = top_k;
  std::vector<double> w;
  for (int e = 0; e < experts; ++e) {
    w.push_back(1.0 / (e + 1));
  }
  boost::random::uniform_int_distribution<int> gpu(0, gpus - 1);
  boost::random::uniform_real_distribution<double> u(0.0, 1.0);
  for (int t = 0; t < tokens; ++t) {
    r.origin.push_back(gpu(rng));
    for (int l = 0; l < layers; ++l) {
      std::vector<int> chosen;
      while (static_cast<int>(chosen.size()) < top_k) {
        double x = u(rng) * 5.0;  // rough Zipf by inversion over the harmonic weights
        int e = 0;
        while (e < experts - 1 && x > w[static_cast<std::size_t>(e)]) {
          x -= w[static_cast<std::size_t>(e++)];
        }
        if (std::find(chosen.begin(), chosen.end(), e) == chosen.end()) {
          chosen.push_back(e);
        }
      }
      r.choice.insert(r.choice.end(), chosen.begin(), chosen.end());
    }
  }
  return r;
}

}  // namespace

TEST_CASE("DIRECTOR predictor: p = 1 is the oracle, p < 1 keeps about p of the selections") {
  core::Rng rng(8);
  const TokenRouting truth = zipf_routing(5000, 3, 32, 4, 4, rng);
  core::Rng a(1);
  const TokenRouting oracle = predict_routing(truth, 1.0, {}, a);
  CHECK(oracle.choice == truth.choice);
  CHECK(workload_matrix(oracle) == workload_matrix(truth));
  for (const double p :
       {0.0, 0.77, predictor_accuracy(PredictorKind::cascade), predictor_accuracy(PredictorKind::quantized)}) {
    core::Rng r(2);
    const TokenRouting pred = predict_routing(truth, p, {}, r);
    // 60000 selections: the standard deviation of the match rate is below 0.002.
    CHECK(topk_accuracy(truth, pred) == Approx(p).margin(0.01));
    for (std::size_t t = 0; t < pred.tokens(); ++t) {  // still k distinct experts per token and layer
      for (int l = 0; l < pred.layers; ++l) {
        std::vector<int> s;
        for (int k = 0; k < pred.top_k; ++k) {
          s.push_back(pred.at(t, l, k));
        }
        std::sort(s.begin(), s.end());
        REQUIRE(std::adjacent_find(s.begin(), s.end()) == s.end());
      }
    }
    // Same tokens per origin: the prediction moves selections between experts, not between GPUs.
    const std::vector<double> wt = workload_matrix(truth);
    const std::vector<double> wp = workload_matrix(pred);
    double st = 0.0;
    double sp = 0.0;
    for (std::size_t k = 0; k < wt.size(); ++k) {
      st += wt[k];
      sp += wp[k];
    }
    CHECK(sp == st);
  }
  core::Rng r1(3);
  core::Rng r2(3);
  CHECK(predict_routing(truth, 0.85, {}, r1).choice == predict_routing(truth, 0.85, {}, r2).choice);
}

TEST_CASE("DIRECTOR predictor: Table II presets") {
  CHECK(predictor_accuracy(PredictorKind::oracle) == 1.0);
  CHECK(predictor_accuracy(PredictorKind::cascade, "qwen3-30b-a3b") == Approx(0.7699));
  CHECK(predictor_accuracy(PredictorKind::cascade, "mixtral-8x7b") == Approx(0.9144));
  CHECK(predictor_accuracy(PredictorKind::quantized, "deepseek-v2-lite") == Approx(0.9568));
  CHECK(predictor_accuracy(PredictorKind::cascade) == Approx(0.84715));
  CHECK(predictor_accuracy(PredictorKind::quantized) == Approx(0.9423));
}

TEST_CASE("DIRECTOR offline with window = pass_kinds: the window's prefill passes and decode steps, each per step") {
  // 1 layer, 2 experts, 2 GPUs. Window steps: a prefill pass (100 and 20 tokens), two decode steps (4 / 0
  // and 2 / 2). pass_kinds: prefill W = (100, 20) / 2 GPUs, counted once; decode W = the mean (3, 1) / 2,
  // counted twice. sum (the paper's): one W, the total (106, 22) / 2.
  core::Rng rng(5);
  PlacementInput in = PlacementInput::shape(1, 2, 2, 1, 1);
  in.set_cost_curves(convex_curves(2, rng));
  in.set_load_window({106.0, 22.0}, {100.0, 20.0, 4.0, 0.0, 2.0, 2.0}, {1, 0, 0});
  DirectorOptions o;
  o.window = DirectorWindow::pass_kinds;
  const DirectorProblem kinds = director_problem(in, o);
  REQUIRE(kinds.passes == 2);
  REQUIRE(kinds.pass_weight == std::vector<double>{1.0, 2.0});
  // [pass][layer][origin][expert]
  REQUIRE(kinds.workload == std::vector<double>{50.0, 10.0, 50.0, 10.0, 1.5, 0.5, 1.5, 0.5});
  const DirectorProblem summed = director_problem(in, DirectorOptions{});
  REQUIRE(summed.passes == 1);
  REQUIRE(summed.workload == std::vector<double>{53.0, 11.0, 53.0, 11.0});
  // Step kinds unknown (a trace's window): one kind, the mean per step.
  PlacementInput trace = PlacementInput::shape(1, 2, 2, 1, 1);
  trace.set_cost_curves(convex_curves(2, rng));
  trace.set_load_window({106.0, 22.0}, {100.0, 20.0, 4.0, 0.0, 2.0, 2.0});
  const DirectorProblem one = director_problem(trace, o);
  REQUIRE(one.passes == 1);
  REQUIRE(one.pass_weight == std::vector<double>{3.0});
  REQUIRE(one.workload[0] == Approx(106.0 / 3.0 / 2.0));
  // A kind per step or none.
  CHECK_THROWS_WITH(trace.set_load_window({1.0, 1.0}, {1.0, 1.0}, {1, 0}),
                    Catch::Contains("a kind for each of its 1 steps"));
  // In the registry: placement_options.window.
  const toml::table opts = toml::parse("window = \"pass_kinds\"");
  core::ParamTable t({core::ParamLayer{&opts, "f.toml"}}, "policy.placement_options");
  REQUIRE(placement_registry().create("director", t) != nullptr);
}
