// SPDX-License-Identifier: Apache-2.0
// GRACE-MoE (policies/grace/affinity.hpp, spectral_grouping.hpp, grace_replication.hpp, grace_placement.hpp,
// grace_routing.hpp): affinity counting, spectral recovery of planted blocks, Algorithm 2 and the knee
// by hand, Eq. 2 and the hot experts by hand, Eq. 3 routing weights by hand, locality tiers, token
// conservation, determinism and the registry entries.
#include <toml++/toml.h>
#include <algorithm>
#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <boost/random/uniform_real_distribution.hpp>
#include <catch2/catch.hpp>
#include <numeric>
#include <set>

#include "core/error.hpp"
#include "policies/grace/affinity.hpp"
#include "policies/grace/grace_placement.hpp"
#include "policies/grace/grace_replication.hpp"
#include "policies/grace/grace_routing.hpp"
#include "policies/grace/spectral_grouping.hpp"
#include "policies/registry.hpp"
#include "tests/support/random_placement.hpp"

using namespace epsim::policies;
using Catch::Contains;
using Rng = boost::random::mt19937_64;

namespace {

int uniform(Rng& rng, int lo, int hi) {
  return boost::random::uniform_int_distribution<int>(lo, hi)(rng);
}
double uniform_real(Rng& rng, double lo, double hi) {
  return boost::random::uniform_real_distribution<double>(lo, hi)(rng);
}

// Experts shuffled into `blocks` planted blocks of `size`: intra affinity 20 + U(0, 5), inter U(0, 3).
struct Planted {
  std::vector<int> block;  // planted block of each expert
  Eigen::MatrixXd affinity;
};
Planted planted_blocks(Rng& rng, int blocks, int size) {
  const int n = blocks * size;
  Planted p;
  p.block.resize(static_cast<std::size_t>(n));
  for (int e = 0; e < n; ++e) {
    p.block[static_cast<std::size_t>(e)] = e / size;
  }
  for (int i = n - 1; i > 0; --i) {
    std::swap(p.block[static_cast<std::size_t>(i)], p.block[static_cast<std::size_t>(uniform(rng, 0, i))]);
  }
  p.affinity = Eigen::MatrixXd::Zero(n, n);
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) {
      const bool same = p.block[static_cast<std::size_t>(i)] == p.block[static_cast<std::size_t>(j)];
      p.affinity(i, j) = p.affinity(j, i) = same ? 20.0 + uniform_real(rng, 0.0, 5.0) : uniform_real(rng, 0.0, 3.0);
    }
  }
  return p;
}

// Every group is exactly one planted block.
void require_recovers(const Groups& groups, const std::vector<int>& block, int size) {
  std::set<int> seen;
  for (const auto& g : groups) {
    REQUIRE(static_cast<int>(g.size()) == size);
    const int b = block[static_cast<std::size_t>(g.front())];
    for (const int e : g) {
      REQUIRE(block[static_cast<std::size_t>(e)] == b);
    }
    REQUIRE(seen.insert(b).second);
  }
}

std::vector<double> to_counts(const Eigen::MatrixXd& a) {
  std::vector<double> c;
  for (Eigen::Index i = 0; i < a.rows(); ++i) {
    for (Eigen::Index j = 0; j < a.cols(); ++j) {
      c.push_back(a(i, j));
    }
  }
  return c;
}

RoutedLoad route(RoutingPolicy& policy, const std::vector<std::int32_t>& tokens,
                 const std::vector<std::int32_t>& origin, const LayerPlacement& p, int gpus_per_node) {
  RoutedLoad out{std::vector<std::int32_t>(static_cast<std::size_t>(p.num_slots()), -1), true};
  StepLayerLoad load{tokens, 0, 1};
  load.origin_tokens = origin;
  load.gpus_per_node = gpus_per_node;
  policy.route(load, p, out);
  return out;
}

// Every expert's tokens land on its replicas, nothing elsewhere.
void require_conserved(const std::vector<std::int32_t>& tokens, const LayerPlacement& p, const RoutedLoad& r) {
  std::int64_t on_replicas = 0;
  for (int e = 0; e < p.num_experts; ++e) {
    std::int64_t sum = 0;
    for (const int s : p.replicas(e)) {
      REQUIRE(r.slot_tokens[static_cast<std::size_t>(s)] >= 0);
      sum += r.slot_tokens[static_cast<std::size_t>(s)];
    }
    REQUIRE(sum == tokens[static_cast<std::size_t>(e)]);
    on_replicas += sum;
  }
  REQUIRE(std::accumulate(r.slot_tokens.begin(), r.slot_tokens.end(), std::int64_t{0}) == on_replicas);
  REQUIRE_FALSE(r.all_gather_dispatch);
}

// Every expert once, the other slots random experts or empty (-1), shuffled over the slots.
LayerPlacement random_placement(Rng& rng, int experts, int gpus, int slots_per_gpu) {
  return epsim::test::random_placement(rng, experts, gpus, slots_per_gpu);
}

}  // namespace

TEST_CASE("grace affinity counts co-selections of the same token") {
  const std::vector<int> topk{0, 1, 2, /**/ 1, 0, -1, /**/ 3, 3, 1};
  const AffinityMatrix a = affinity_from_topk(topk, 3, 4);
  REQUIRE(a(0, 1) == 2.0);
  REQUIRE(a(0, 2) == 1.0);
  REQUIRE(a(1, 2) == 1.0);
  REQUIRE(a(1, 3) == 1.0);
  REQUIRE(a(0, 3) == 0.0);
  REQUIRE(a(2, 3) == 0.0);
  REQUIRE(a.isApprox(a.transpose()));
  REQUIRE(a.diagonal().isZero());
  REQUIRE_THROWS_WITH(affinity_from_topk(topk, 4, 4), Contains("top_k"));
  REQUIRE_THROWS_WITH(affinity_from_topk(std::vector<int>{0, 4}, 2, 4), Contains("out of range"));
  // Counts: symmetrised, diagonal dropped, negatives refused.
  const AffinityMatrix b = affinity_from_counts(std::vector<double>{5, 1, 3, 7}, 2);
  REQUIRE(b(0, 1) == 2.0);
  REQUIRE(b(1, 0) == 2.0);
  REQUIRE(b(0, 0) == 0.0);
  REQUIRE_THROWS_WITH(affinity_from_counts(std::vector<double>{0, -1, 0, 0}, 2), Contains(">= 0"));
  REQUIRE_THROWS_WITH(affinity_from_counts(std::vector<double>{0, 1, 0}, 2), Contains("expected 4"));
}

TEST_CASE("grace spectral clustering recovers a planted block structure") {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    Rng rng(seed);
    const Planted p = planted_blocks(rng, 4, 8);
    KMeansOptions o;
    o.seed = seed;
    require_recovers(spectral_clustering(p.affinity, 4, o), p.block, 8);
  }
  // Degenerate shapes: one group, more groups than experts.
  const Eigen::MatrixXd a = Eigen::MatrixXd::Ones(3, 3) - Eigen::MatrixXd::Identity(3, 3);
  REQUIRE(spectral_clustering(a, 1, {}) == Groups{{0, 1, 2}});
  REQUIRE(spectral_clustering(a, 4, {}) == Groups{{0}, {1}, {2}, {}});
}

TEST_CASE("grace spectral clustering and k-means are deterministic for a seed") {
  Rng rng(7);
  const Planted p = planted_blocks(rng, 3, 5);
  KMeansOptions o;
  o.seed = 42;
  o.restarts = 3;
  REQUIRE(spectral_clustering(p.affinity, 3, o) == spectral_clustering(p.affinity, 3, o));
  Eigen::MatrixXd points(6, 1);
  points << 0.0, 0.1, 5.0, 5.1, 10.0, 10.2;
  REQUIRE(kmeans(points, 3, o) == std::vector<int>{0, 0, 1, 1, 2, 2});  // renumbered by smallest member
}

TEST_CASE("grace Algorithm 2 on a hand-checked case") {
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(6, 6);
  const auto set = [&](int i, int j, double v) { a(i, j) = a(j, i) = v; };
  for (int i = 0; i < 4; ++i) {
    for (int j = i + 1; j < 4; ++j) {
      set(i, j, 10.0);
    }
  }
  set(0, 4, 1.0);
  set(4, 5, 3.0);
  // E = 3, delta = 1: sizes in [2, 4]. Cluster 0 keeps its 4 members of highest affinity to it (0..3:
  // 31, 30, 30, 30 against 1 for expert 4); 4 goes to the only group with room.
  REQUIRE(controlled_size_bounds(6, 2, 0.0, 10).num_min == 2);
  REQUIRE(controlled_size_bounds(6, 2, 0.0, 10).num_max == 4);
  REQUIRE(controlled_nonuniform_grouping(a, Groups{{0, 1, 2, 3, 4}, {5}}, 0.0, 10) == Groups{{0, 1, 2, 3}, {4, 5}});
  // Three groups: E = 2, sizes in [1, 3]. Cluster 0 keeps 0, 1, 2 (all tie at 30: lower ids); 3 goes
  // to the group maximising IntraScore(L + {3}): {4, 5} (6) over {} (0). The empty group then takes
  // the weakest expert of the groups above num_min: 3 (affinity 0 to {4, 5}, others 3 or 20).
  REQUIRE(controlled_nonuniform_grouping(a, Groups{{0, 1, 2, 3}, {4, 5}, {}}, 0.0, 10) ==
          Groups{{0, 1, 2}, {4, 5}, {3}});
  // A slot limit below E + delta caps num_max.
  REQUIRE(controlled_size_bounds(6, 2, 0.5, 3).num_max == 3);
  REQUIRE(controlled_nonuniform_grouping(a, Groups{{0, 1, 2, 3, 4}, {5}}, 0.0, 3) == Groups{{0, 1, 2}, {3, 4, 5}});
  // delta = max(1, round(E r)): E = 10, r = 0.26 -> 3.
  REQUIRE(controlled_size_bounds(40, 4, 0.26, 100).num_min == 7);
  REQUIRE(controlled_size_bounds(40, 4, 0.26, 100).num_max == 13);
  // Eq. 1 on the first grouping: intra pairs 6 x 10 + 3 of 6 x 10 + 1 + 3.
  REQUIRE(affinity_utilisation(a, Groups{{0, 1, 2, 3}, {4, 5}}) == Approx(63.0 / 64.0));
  REQUIRE(size_deviation(Groups{{0, 1, 2, 3}, {4, 5}}, 6) == Approx(1.0));
  REQUIRE(intra_score(a, std::vector<int>{4, 5}) == 6.0);
}

TEST_CASE("grace knee of the S(r), U(r) curve") {
  // Scaled chord y = x: distances 0, 0.467, 0.267, 0 (times 1 / sqrt 2) -> the second point.
  REQUIRE(knee_index(std::vector<double>{0, 1, 2, 3}, std::vector<double>{0.2, 0.8, 0.9, 0.95}) == 1);
  // Order of the candidates does not matter.
  REQUIRE(knee_index(std::vector<double>{2, 0, 3, 1}, std::vector<double>{0.9, 0.2, 0.95, 0.8}) == 3);
  // Straight line: no knee, least S.
  REQUIRE(knee_index(std::vector<double>{0, 1, 2}, std::vector<double>{0, 1, 2}) == 0);
  // Equal S: the largest U, then the lowest index.
  REQUIRE(knee_index(std::vector<double>{1, 1, 1}, std::vector<double>{0.5, 0.7, 0.7}) == 1);
  REQUIRE_THROWS_AS(knee_index(std::vector<double>{}, std::vector<double>{}), epsim::core::Error);
}

TEST_CASE("grace replica count formula (Eq. 2)") {
  REQUIRE(replica_count(0.5, 8) == 1);  // rho < 1: at least one
  REQUIRE(replica_count(1.0, 8) == 1);
  REQUIRE(replica_count(2.7, 8) == 2);  // floor
  REQUIRE(replica_count(7.99, 8) == 7);
  REQUIRE(replica_count(8.0, 8) == 7);  // rho >= n_gpu: n_gpu - 1
  REQUIRE(replica_count(1e300, 8) == 7);
  REQUIRE(replica_count(2.5, 2) == 1);
  REQUIRE(replica_count(3.0, 1) == 0);  // one GPU: nowhere to copy to
  REQUIRE_THROWS_AS(replica_count(-1.0, 4), epsim::core::Error);
}

TEST_CASE("grace hot experts by cumulative load") {
  // Group load 100, ranked 5 (40), 7 (30), 9 (20), 3 (10).
  std::vector<double> load(10, 0.0);
  load[3] = 10;
  load[5] = 40;
  load[7] = 30;
  load[9] = 20;
  const std::vector<int> group{3, 5, 7, 9};
  REQUIRE(hot_experts(group, load, 1) == std::vector<int>{5, 7});     // 40 <= 50 < 70
  REQUIRE(hot_experts(group, load, 2) == std::vector<int>{5, 7});     // 66.7 < 70
  REQUIRE(hot_experts(group, load, 3) == std::vector<int>{5, 7, 9});  // 70 <= 75 < 90
  REQUIRE(hot_experts(group, load, 0).empty());
  REQUIRE(hot_experts(std::vector<int>{0, 1}, load, 2).empty());  // no load
}

TEST_CASE("grace replication plan and Eq. 3 by hand") {
  // GPU loads 100, 20, 20, 20: rho = 2.5 -> n = 2; hot {0, 1} (50, 80 > 66.7); targets GPUs 1, 2.
  const std::vector<std::vector<int>> groups{{0, 1, 2}, {3}, {4, 5}, {6}};
  const std::vector<double> load{50, 30, 20, 20, 10, 10, 20};
  ReplicationPlan p = plan_replication(groups, load, 4);
  REQUIRE(p.rho == Approx(2.5));
  REQUIRE(p.n_replica == 2);
  REQUIRE(p.heaviest_gpu == 0);
  REQUIRE(p.hot == std::vector<int>{0, 1});
  REQUIRE(p.targets == std::vector<int>{1, 2});
  REQUIRE(p.replicas == std::vector<std::pair<int, int>>{{0, 1}, {0, 2}, {1, 1}, {1, 2}});
  REQUIRE(p.dropped == 0);
  REQUIRE(p.replicated_load == 80.0);
  // paper: W_p = 100 / 3; W'_0 = 100 - 80 + W_p, W'_1 = W'_2 = 20 + W_p.
  REQUIRE(p.predicted_load[0] == Approx(20.0 + 100.0 / 3.0));
  REQUIRE(p.predicted_load[1] == Approx(20.0 + 100.0 / 3.0));
  REQUIRE(p.predicted_load[3] == 20.0);
  p = plan_replication(groups, load, 4, ReplicaShare::conserving);  // W_p = 80 / 3, total kept
  REQUIRE(p.predicted_load[0] == Approx(20.0 + 80.0 / 3.0));
  REQUIRE(std::accumulate(p.predicted_load.begin(), p.predicted_load.end(), 0.0) == Approx(160.0));
  // Three slots: GPU 2 has room for one copy only.
  p = plan_replication(groups, load, 3);
  REQUIRE(p.replicas == std::vector<std::pair<int, int>>{{0, 1}, {0, 2}, {1, 1}});
  REQUIRE(p.dropped == 1);
  REQUIRE_THROWS_WITH(plan_replication(groups, load, 2), Contains("more than its 2 slots"));
}

TEST_CASE("grace placement groups planted blocks per GPU and replicates the hot group") {
  // 2 nodes x 2 GPUs, 4 planted blocks of 4; block of expert 0 carries most of the load.
  Rng rng(3);
  const Planted planted = planted_blocks(rng, 4, 4);
  PlacementInput in = PlacementInput::shape(2, 16, 4, 2, 8);
  in.seed = 11;
  std::vector<double> counts;
  std::vector<double> total;
  for (int l = 0; l < 2; ++l) {
    const std::vector<double> c = to_counts(planted.affinity);
    counts.insert(counts.end(), c.begin(), c.end());
    for (int e = 0; e < 16; ++e) {
      total.push_back(planted.block[static_cast<std::size_t>(e)] == planted.block[0] ? 100.0 : 10.0);
    }
  }
  in.set_coactivation(counts);
  in.set_load_window(total);
  GracePlacement policy;
  const Placement p = policy.place(in);
  REQUIRE(p.layers.size() == 2);
  const GraceLayerReport& r = policy.last_report()[0];
  // Primaries: each GPU one planted block, each node two.
  Groups by_gpu(4);
  for (int e = 0; e < 16; ++e) {
    by_gpu[static_cast<std::size_t>(r.gpu_of_expert[static_cast<std::size_t>(e)])].push_back(e);
    REQUIRE(r.node_of_expert[static_cast<std::size_t>(e)] == r.gpu_of_expert[static_cast<std::size_t>(e)] / 2);
  }
  require_recovers(by_gpu, planted.block, 4);
  // Loads: hot block 4 x 100 = 400, others 40: rho = 400 / 130 -> n = 3; the prefix must exceed 3/4 of
  // 400, so all 4 hot experts are copied onto each of the 3 other GPUs (4 + 4 <= 8 slots).
  const ReplicationPlan& rep = r.replication;
  REQUIRE(rep.n_replica == 3);
  REQUIRE(rep.heaviest_gpu == r.gpu_of_expert[0]);
  REQUIRE(rep.hot.size() == 4);
  REQUIRE(rep.replicas.size() == 12);
  const LayerPlacement& l0 = p.layers[0];
  for (const int e : rep.hot) {
    REQUIRE(l0.logcnt[static_cast<std::size_t>(e)] == 4);
    REQUIRE(l0.gpu_of_slot(l0.replicas(e)[0]) == rep.heaviest_gpu);  // rank 0 = the primary
  }
  // Determinism: same input, same placement.
  GracePlacement again;
  REQUIRE(again.place(in).layers[1].phy2log == p.layers[1].phy2log);
  // Without replication: one copy each, free slots empty.
  GraceConfig off;
  off.replication = false;
  const Placement q = GracePlacement(off).place(in);
  REQUIRE(q.layers[0].max_replicas == 1);
  REQUIRE(std::count(q.layers[0].phy2log.begin(), q.layers[0].phy2log.end(), -1) == 32 - 16);
  // Missing inputs are named.
  PlacementInput none = PlacementInput::shape(2, 16, 4, 2, 8);
  none.set_load_window(total);
  REQUIRE_THROWS_WITH(policy.place(none), Contains("PolicyNeeds::coactivation"));
  none = PlacementInput::shape(2, 16, 4, 2, 8);
  none.set_coactivation(counts);
  REQUIRE_THROWS_WITH(policy.place(none), Contains("PolicyNeeds::load_window"));
  REQUIRE_NOTHROW(GracePlacement(off).place(none));
  // Counts of the wrong shape are refused where they are given.
  counts.pop_back();
  REQUIRE_THROWS_WITH(none.set_coactivation(counts), Contains("co-activation"));
}

TEST_CASE("grace placement keeps node and GPU slot limits") {
  // One block of 12 cannot fit a node of 2 x 4 slots: the overflow moves, every GPU stays within 4.
  Rng rng(5);
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(16, 16);
  for (int i = 0; i < 16; ++i) {
    for (int j = i + 1; j < 16; ++j) {
      a(i, j) = a(j, i) = (i < 12 && j < 12) ? 10.0 + uniform_real(rng, 0.0, 1.0) : uniform_real(rng, 0.0, 1.0);
    }
  }
  PlacementInput in = PlacementInput::shape(1, 16, 4, 2, 4);
  in.set_coactivation(to_counts(a));
  in.set_load_window(std::vector<double>(16, 1.0));
  const Placement p = GracePlacement().place(in);
  for (int e = 0; e < 16; ++e) {
    REQUIRE(p.layers[0].logcnt[static_cast<std::size_t>(e)] == 1);  // no free slot for copies
  }
}

TEST_CASE("grace routing weights by Eq. 3 predicted load within a tier") {
  // GPU 0: expert 0 (primary) and 1; GPU 1: 2 and a copy of 0; GPU 2: 3 and a copy of 0; GPU 3: 4.
  const LayerPlacement p =
      make_layer_placement(5, 4, 2, {0, 1, 2, 0, 3, 0, 4, -1}, std::vector<int>{0, 0, 0, 1, 0, 2, 0, 0});
  const std::vector<std::int32_t> tokens{90, 10, 0, 30, 0};
  std::vector<std::int32_t> origin(20, 0);
  origin[3 * 5 + 0] = 90;  // all of expert 0's tokens from GPU 3, which has no copy
  origin[0 * 5 + 1] = 10;
  origin[2 * 5 + 3] = 30;
  GraceRoutingConfig c;
  c.choice = GraceRoutingConfig::Choice::proportional;
  c.share = ReplicaShare::conserving;
  GraceRouting conserving(c);
  // W = 100, 0, 30, 0; W_r = 90, n = 2, W_p = 30: W' = 40, 30, 60, 0 -> 90 split 30, 40, 20.
  RoutedLoad r = route(conserving, tokens, origin, p, 4);
  REQUIRE(conserving.predicted_load()[0] == Approx(40.0));
  REQUIRE(conserving.predicted_load()[2] == Approx(60.0));
  REQUIRE(r.slot_tokens == std::vector<std::int32_t>{30, 10, 0, 40, 30, 20, 0, 0});
  // paper: W_p = 100 / 3, W' = 43.3, 33.3, 63.3 -> quotas 30.16, 39.21, 20.63 -> 30, 39, 21.
  c.share = ReplicaShare::paper;
  GraceRouting paper(c);
  r = route(paper, tokens, origin, p, 4);
  REQUIRE(r.slot_tokens == std::vector<std::int32_t>{30, 10, 0, 39, 30, 21, 0, 0});
  require_conserved(tokens, p, r);
}

TEST_CASE("grace routing picks the local replica whenever one exists") {
  // Each (origin, expert) alone: tokens with a replica on their GPU stay there; otherwise none leaves
  // the node while the node has a replica.
  Rng rng(9);
  for (const auto choice : {GraceRoutingConfig::Choice::random, GraceRoutingConfig::Choice::proportional}) {
    GraceRoutingConfig c;
    c.choice = choice;
    GraceRouting policy(c);
    for (int trial = 0; trial < 20; ++trial) {
      const int per_node = 2;
      const LayerPlacement p = random_placement(rng, 6, 6, 3);
      for (int o = 0; o < 6; ++o) {
        for (int e = 0; e < 6; ++e) {
          std::vector<std::int32_t> tokens(6, 0);
          std::vector<std::int32_t> origin(36, 0);
          tokens[static_cast<std::size_t>(e)] = 25;
          const int at = o * 6 + e;
          origin[static_cast<std::size_t>(at)] = 25;
          const RoutedLoad r = route(policy, tokens, origin, p, per_node);
          require_conserved(tokens, p, r);
          bool on_gpu = false;
          bool on_node = false;
          for (const int s : p.replicas(e)) {
            on_gpu = on_gpu || p.gpu_of_slot(s) == o;
            on_node = on_node || p.gpu_of_slot(s) / per_node == o / per_node;
          }
          for (int s = 0; s < p.num_slots(); ++s) {
            const std::int32_t got = r.slot_tokens[static_cast<std::size_t>(s)];
            if (got == 0) {
              continue;
            }
            const int g = p.gpu_of_slot(s);
            if (on_gpu) {
              REQUIRE(g == o);
              REQUIRE(got == 25);
            } else if (on_node) {
              REQUIRE(g / per_node == o / per_node);
            }
          }
        }
      }
    }
  }
}

TEST_CASE("grace routing routes every token, deterministically for a seed") {
  Rng rng(21);
  GraceRouting a;
  GraceRouting b;
  for (int trial = 0; trial < 50; ++trial) {
    const LayerPlacement p = random_placement(rng, 8, 4, 4);
    std::vector<std::int32_t> tokens(8, 0);
    std::vector<std::int32_t> origin(32, 0);
    for (int o = 0; o < 4; ++o) {
      for (int e = 0; e < 8; ++e) {
        const int n = uniform(rng, 0, 3) == 0 ? 0 : uniform(rng, 1, 40);
        const int at = o * 8 + e;
        origin[static_cast<std::size_t>(at)] = n;
        tokens[static_cast<std::size_t>(e)] += n;
      }
    }
    const RoutedLoad ra = route(a, tokens, origin, p, 2);
    require_conserved(tokens, p, ra);
    REQUIRE(route(b, tokens, origin, p, 2).slot_tokens == ra.slot_tokens);
    // Unknown origins and unknown nodes: spread evenly over the GPUs, still conserved.
    const RoutedLoad ua = route(a, tokens, {}, p, 0);
    require_conserved(tokens, p, ua);
    REQUIRE(route(b, tokens, {}, p, 0).slot_tokens == ua.slot_tokens);
  }
  // Origins that do not add up to the expert's tokens are refused.
  const LayerPlacement p = make_layer_placement(2, 2, 1, {0, 1});
  REQUIRE_THROWS_WITH(route(a, {3, 0}, {1, 0, 1, 0}, p, 1), Contains("sum to 2"));
  REQUIRE_THROWS_WITH(route(a, {3, 0}, {}, p, 3), Contains("gpus_per_node"));
}

TEST_CASE("grace in the placement and routing registries") {
  const auto table = [](std::string_view text) { return toml::parse(text); };
  {
    const toml::table tab = table("replication = false\nratios = [0.0, 0.5]\nkmeans_restarts = 2\n");
    epsim::core::ParamTable t({epsim::core::ParamLayer{&tab, "f.toml"}}, "policy.placement_options");
    const auto policy = placement_registry().create("grace", t);
    const auto* g = dynamic_cast<const GracePlacement*>(policy.get());
    REQUIRE(g != nullptr);
    REQUIRE_FALSE(g->config().replication);
    REQUIRE(g->config().ratios == std::vector<double>{0.0, 0.5});
    REQUIRE(g->config().kmeans_restarts == 2);
    REQUIRE(g->needs().coactivation);
    REQUIRE_FALSE(g->needs().load_window);
  }
  {
    const toml::table tab = table("choice = \"proportional\"\nshare = \"conserving\"\nseed = 5\n");
    epsim::core::ParamTable t({epsim::core::ParamLayer{&tab, "f.toml"}}, "policy.routing_options");
    const auto policy = routing_registry().create("grace", t);
    const auto* g = dynamic_cast<const GraceRouting*>(policy.get());
    REQUIRE(g != nullptr);
    REQUIRE(g->config().choice == GraceRoutingConfig::Choice::proportional);
    REQUIRE(g->config().share == ReplicaShare::conserving);
    REQUIRE(g->config().seed == 5);
  }
  {
    const toml::table tab = table("choice = \"nearest\"\n");
    epsim::core::ParamTable t({epsim::core::ParamLayer{&tab, "f.toml"}}, "policy.routing_options");
    REQUIRE_THROWS_WITH(routing_registry().create("grace", t), Contains("valid values are: random, proportional"));
  }
  REQUIRE(placement_registry().docs(*placement_registry().find("grace")).size() == 5);
  REQUIRE(routing_registry().docs(*routing_registry().find("grace")).size() == 3);
}
