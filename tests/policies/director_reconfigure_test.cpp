// SPDX-License-Identifier: Apache-2.0
// DIRECTOR online reconfiguration (policies/director/director_reconfigure.hpp): the maximum-overlap relabelling
// against brute force over every GPU permutation, and which layer placement migrates, by hand.
#include <algorithm>
#include <boost/random/uniform_int_distribution.hpp>
#include <catch2/catch.hpp>
#include <numeric>

#include "core/random_streams.hpp"
#include "policies/director/director_reconfigure.hpp"

using namespace epsim;
using namespace epsim::policies;

namespace {

// Experts that stay on their GPU.
int kept(const std::vector<int>& a, const std::vector<int>& b) {
  int n = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    n += a[i] == b[i] ? 1 : 0;
  }
  return n;
}

// A random layer: `experts` on `gpus` GPUs, at most `capacity` each.
std::vector<int> random_layer(int experts, int gpus, int capacity, core::Rng& rng) {
  std::vector<int> slots;
  for (int g = 0; g < gpus; ++g) {
    slots.insert(slots.end(), static_cast<std::size_t>(capacity), g);
  }
  for (int i = static_cast<int>(slots.size()) - 1; i > 0; --i) {
    std::swap(slots[static_cast<std::size_t>(i)],
              slots[static_cast<std::size_t>(boost::random::uniform_int_distribution<int>(0, i)(rng))]);
  }
  slots.resize(static_cast<std::size_t>(experts));
  return slots;
}

}  // namespace

TEST_CASE("relabelling keeps as many experts in place as the best GPU permutation does") {
  core::Rng rng(31);
  for (const int gpus : {2, 3, 4, 5}) {
    for (int run = 0; run < 25; ++run) {
      const int capacity = 3;
      const int experts = gpus * capacity - run % 2;
      const std::vector<int> current = random_layer(experts, gpus, capacity, rng);
      const std::vector<int> next = random_layer(experts, gpus, capacity, rng);
      const std::vector<int> out = relabel_for_overlap(current, next, gpus);
      // Brute force over every renaming of the new placement's GPUs.
      std::vector<int> perm(static_cast<std::size_t>(gpus));
      std::iota(perm.begin(), perm.end(), 0);
      int best = 0;
      do {
        std::vector<int> renamed(next.size());
        for (std::size_t i = 0; i < next.size(); ++i) {
          renamed[i] = perm[static_cast<std::size_t>(next[i])];
        }
        best = std::max(best, kept(current, renamed));
      } while (std::next_permutation(perm.begin(), perm.end()));
      CHECK(kept(current, out) == best);
      // out is next with its GPUs renamed: experts together in next are together in out, and only they.
      for (std::size_t i = 0; i < next.size(); ++i) {
        for (std::size_t j = 0; j < next.size(); ++j) {
          CHECK((next[i] == next[j]) == (out[i] == out[j]));
        }
      }
    }
  }
}

namespace {

// One layer, 4 experts, 2 alike GPUs with 2 slots: compute only (10 ns per token, no link cost), the
// tokens of expert i all from GPU 0.
struct Hand {
  std::shared_ptr<const CostCurves> curves = std::make_shared<const CostCurves>(
      std::vector<std::vector<double>>{{1.0}, {1.0}}, std::vector<std::vector<double>>{{10.0}, {10.0}});
  DirectorProblem p;
  explicit Hand(std::vector<double> tokens) {
    p.layers = 1;
    p.experts = 4;
    p.gpus = 2;
    p.capacity = 2;
    p.workload = tokens;
    p.workload.resize(8, 0.0);  // origin GPU 1 sends nothing
    p.link_bytes_per_ns = {1.0, 1.0, 1.0, 1.0};
    p.bytes_per_token = 0.0;
    p.curves = curves.get();
  }
};

}  // namespace

TEST_CASE("reconfiguration migrates a layer only for a gain worth it, with the fewest moves") {
  SECTION("a new placement that only renames the GPUs moves nothing") {
    const Hand h({10, 10, 1, 1});
    const ReconfigureResult r = reconfigure(h.p, std::vector<int>{0, 1, 0, 1}, std::vector<int>{1, 0, 1, 0}, 0.02);
    CHECK(r.gpu_of == std::vector<int>{0, 1, 0, 1});
    CHECK(r.experts_moved == 0);
    CHECK(r.layers_kept == 1);
  }
  SECTION("a large gain is taken") {
    // Hot experts 0 and 1 together on GPU 0: 200 ns; split, 110 ns. One swap gets there (2 moves).
    const Hand h({10, 10, 1, 1});
    const ReconfigureResult r = reconfigure(h.p, std::vector<int>{0, 0, 1, 1}, std::vector<int>{1, 0, 1, 0}, 0.02);
    CHECK(director_layer_cost(h.p, 0, r.gpu_of).total_ns() == Approx(110.0));
    CHECK(r.experts_moved == 2);
    CHECK(r.layers_kept == 0);
  }
  SECTION("a gain under min_gain is not") {
    // {0, 2} {1, 3}: 10.5 vs 10.1 tokens -> 105 ns; the optimum {0, 3} {1, 2}: 10.3 each -> 103 ns, 1.9 %.
    const Hand h({10, 9.8, 0.5, 0.3});
    const std::vector<int> current{0, 1, 0, 1};
    const std::vector<int> best{0, 1, 1, 0};
    CHECK(director_layer_cost(h.p, 0, current).total_ns() == Approx(105.0));
    CHECK(director_layer_cost(h.p, 0, best).total_ns() == Approx(103.0));
    const ReconfigureResult keep = reconfigure(h.p, current, best, 0.02);
    CHECK(keep.gpu_of == current);
    CHECK(keep.layers_kept == 1);
    // With 1 %, it is: {0, 1, 1, 0} or its renaming {1, 0, 0, 1}, either one swap.
    const ReconfigureResult take = reconfigure(h.p, current, best, 0.01);
    CHECK(director_layer_cost(h.p, 0, take.gpu_of).total_ns() == Approx(103.0));
    CHECK(take.experts_moved == 2);
  }
  SECTION("layers are decided one by one") {
    Hand h({10, 10, 1, 1});
    h.p.layers = 2;
    h.p.workload.insert(h.p.workload.end(), h.p.workload.begin(), h.p.workload.end());
    // Layer 0 is already split (kept); layer 1 has both hot experts on GPU 1 (fixed).
    const ReconfigureResult r =
        reconfigure(h.p, std::vector<int>{0, 1, 0, 1, 1, 1, 0, 0}, std::vector<int>{1, 0, 1, 0, 0, 1, 0, 1}, 0.02);
    CHECK(std::vector<int>(r.gpu_of.begin(), r.gpu_of.begin() + 4) == std::vector<int>{0, 1, 0, 1});
    CHECK(director_layer_cost(h.p, 1, std::span<const int>(r.gpu_of).subspan(4)).total_ns() == Approx(110.0));
    CHECK(r.layers_kept == 1);
    CHECK(r.experts_moved == 2);
  }
  SECTION("mismatched shapes are rejected") {
    const Hand h({10, 10, 1, 1});
    CHECK_THROWS_WITH(reconfigure(h.p, std::vector<int>{0, 1}, std::vector<int>{0, 1, 0, 1}, 0.02),
                      Catch::Contains("1 layers x 4 experts"));
  }
}
