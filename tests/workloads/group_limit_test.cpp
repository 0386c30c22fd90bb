// SPDX-License-Identifier: Apache-2.0
// Group-limited routing (DeepSeek-V3's n_group / topk_group): the counter against a brute-force count,
// traces with and without a token over the limit through the trace statistics, and the replay's report.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "core/error.hpp"
#include "workloads/group_limit.hpp"
#include "workloads/trace_io.hpp"
#include "workloads/trace_replay.hpp"
#include "workloads/trace_stats.hpp"

using namespace epsim;
using namespace epsim::workloads;
namespace fs = std::filesystem;
using Catch::Contains;

namespace {

fs::path tmp(const std::string& name) {
  return fs::temp_directory_path() / ("epsim_group_limit_test_" + name);
}

// tokens x k distinct expert ids, token-major; half the tokens draw from a few neighbouring groups so that
// both sides of the limit occur.
std::vector<std::uint32_t> random_ids(std::mt19937_64& rng, int tokens, int experts, int k, int per_group) {
  std::vector<std::uint32_t> ids;
  std::uniform_int_distribution<int> any(0, experts - 1);
  for (int t = 0; t < tokens; ++t) {
    const bool narrow = t % 2 == 0;
    const int base = any(rng) / per_group * per_group;
    const int span = std::min(experts, std::max(2 * per_group, k));  // >= k: k distinct ids exist
    std::set<std::uint32_t> picked;
    while (static_cast<int>(picked.size()) < k) {
      const int e = narrow ? (base + std::uniform_int_distribution<int>(0, span - 1)(rng)) % experts : any(rng);
      picked.insert(static_cast<std::uint32_t>(e));
    }
    std::vector<std::uint32_t> row(picked.begin(), picked.end());
    std::shuffle(row.begin(), row.end(), rng);
    ids.insert(ids.end(), row.begin(), row.end());
  }
  return ids;
}

struct Brute {
  std::int64_t over = 0;
  int max_groups = 0;
  std::vector<std::int64_t> histogram;
  std::int64_t first = -1;
};

Brute brute_force(const std::vector<std::uint32_t>& ids, int k, int experts, int groups, int topk_group) {
  Brute b;
  b.histogram.assign(static_cast<std::size_t>(groups) + 1, 0);
  const int per_group = experts / groups;
  for (std::size_t t = 0; t * static_cast<std::size_t>(k) < ids.size(); ++t) {
    std::set<std::uint32_t> g;
    for (int j = 0; j < k; ++j) {
      g.insert(ids[t * static_cast<std::size_t>(k) + static_cast<std::size_t>(j)] /
               static_cast<std::uint32_t>(per_group));
    }
    const int n = static_cast<int>(g.size());
    ++b.histogram[static_cast<std::size_t>(n)];
    b.max_groups = std::max(b.max_groups, n);
    if (n > topk_group) {
      ++b.over;
      if (b.first < 0) {
        b.first = static_cast<std::int64_t>(t);
      }
    }
  }
  return b;
}

trace::Header header(std::uint32_t layers, std::uint32_t experts, std::uint32_t k, bool token_experts) {
  trace::Header h;
  h.set_version(1);
  h.set_model("test");
  h.set_moe_layers(layers);
  h.set_experts(experts);
  h.set_top_k(k);
  h.set_has_token_experts(token_experts);
  return h;
}

// A step whose layers route `ids[l]` (token-major, k per token); expert counts follow from the ids.
trace::Step step_of(std::uint64_t index, int experts, int k, const std::vector<std::vector<std::uint32_t>>& ids,
                    bool keep_ids) {
  trace::Step s;
  s.set_index(index);
  s.set_tokens(static_cast<std::uint32_t>(ids.front().size() / static_cast<std::size_t>(k)));
  for (const auto& layer_ids : ids) {
    trace::LayerLoad* l = s.add_layers();
    std::vector<std::uint32_t> counts(static_cast<std::size_t>(experts), 0);
    for (const std::uint32_t e : layer_ids) {
      ++counts[e];
      if (keep_ids) {
        l->add_token_experts(e);
      }
    }
    for (const std::uint32_t c : counts) {
      l->add_expert_tokens(c);
    }
  }
  return s;
}

// 16 experts in 4 groups of 4, top-3, two MoE layers, two tokens per step. Groups reached per token:
// step 0: layer 0 {0,1,2} -> 1, {0,4,8} -> 3; layer 1 {0,4,5} -> 2, {12,13,14} -> 1;
// step 1: layer 0 {3,7,15} -> 3, {1,2,3} -> 1; layer 1 {8,9,12} -> 2, {4,8,12} -> 3.
const std::vector<std::vector<std::vector<std::uint32_t>>> k_violating = {
    {{0, 1, 2, 0, 4, 8}, {0, 4, 5, 12, 13, 14}},
    {{3, 7, 15, 1, 2, 3}, {8, 9, 12, 4, 8, 12}},
};
// The same shape, every token within 2 groups: 1, 2 / 2, 1 / 1, 2 / 2, 2.
const std::vector<std::vector<std::vector<std::uint32_t>>> k_within = {
    {{0, 1, 2, 0, 4, 5}, {8, 12, 13, 12, 13, 14}},
    {{1, 2, 3, 3, 7, 6}, {8, 9, 12, 4, 8, 9}},
};

void write_trace(const fs::path& p, const std::vector<std::vector<std::vector<std::uint32_t>>>& steps, bool ids) {
  TraceWriter w(p, header(2, 16, 3, ids));
  for (std::size_t i = 0; i < steps.size(); ++i) {
    w.write(step_of(i, 16, 3, steps[i], ids));
  }
  w.close();
}

}  // namespace

TEST_CASE("group counter matches a brute-force count on random tokens") {
  struct Case {
    int experts;
    int groups;
    int topk_group;
    int k;
  };
  // Bitmask path (groups <= 64) and the pairwise path (> 64 groups).
  const std::vector<Case> cases = {{8, 1, 1, 2},   {16, 2, 1, 3}, {16, 4, 2, 3},   {32, 8, 4, 8},
                                   {256, 8, 4, 8}, {64, 8, 3, 6}, {128, 64, 2, 4}, {256, 128, 3, 8}};
  for (const Case& c : cases) {
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      CAPTURE(c.experts, c.groups, c.topk_group, c.k, seed);
      std::mt19937_64 rng(seed);
      GroupLimitCounter counter(c.experts, c.groups, c.topk_group);
      Brute all;
      all.histogram.assign(static_cast<std::size_t>(c.groups) + 1, 0);
      std::int64_t tokens = 0;
      for (int batch = 0; batch < 3; ++batch) {
        const int n = 1 + static_cast<int>(rng() % 60);
        const auto ids = random_ids(rng, n, c.experts, c.k, c.experts / c.groups);
        const Brute b = brute_force(ids, c.k, c.experts, c.groups, c.topk_group);
        REQUIRE(counter.add(ids, c.k) == b.first);
        all.over += b.over;
        all.max_groups = std::max(all.max_groups, b.max_groups);
        for (std::size_t g = 0; g < b.histogram.size(); ++g) {
          all.histogram[g] += b.histogram[g];
        }
        tokens += n;
      }
      REQUIRE(counter.tokens() == tokens);
      REQUIRE(counter.tokens_over_limit() == all.over);
      REQUIRE(counter.max_groups() == all.max_groups);
      REQUIRE(counter.histogram() == all.histogram);
      double sum = 0.0;
      for (std::size_t g = 0; g < all.histogram.size(); ++g) {
        sum += static_cast<double>(g) * static_cast<double>(all.histogram[g]);
      }
      REQUIRE(counter.mean_groups() == Approx(sum / static_cast<double>(tokens)));
    }
  }
}

TEST_CASE("group counter by hand, and its errors") {
  GroupLimitCounter c(16, 4, 2);
  const std::vector<std::uint32_t> ids = {0, 1, 2, 0, 4, 8, 15, 14, 3};  // 1, 3, 2 groups
  REQUIRE(c.add(ids, 3) == 1);
  REQUIRE(c.tokens() == 3);
  REQUIRE(c.tokens_over_limit() == 1);
  REQUIRE(c.max_groups() == 3);
  REQUIRE(c.histogram() == std::vector<std::int64_t>{0, 1, 1, 1, 0});
  REQUIRE(c.mean_groups() == Approx(2.0));
  REQUIRE_THROWS_WITH(GroupLimitCounter(16, 3, 1), Contains("must be >= 1 and divide the 16 experts, got 3"));
  REQUIRE_THROWS_WITH(GroupLimitCounter(16, 4, 5), Contains("topk_group must be in [1, 4]"));
  const std::vector<std::uint32_t> bad = {0, 16};
  REQUIRE_THROWS_WITH(c.add(bad, 2), Contains("expert id 16, expected < 16"));
  REQUIRE_THROWS_WITH(c.add(bad, 3), Contains("2 token expert ids are not a whole number of tokens of top-3"));
}

TEST_CASE("trace stats: a trace with tokens over the group limit, one within it, one without token ids") {
  StatsOptions o;
  o.ep_size = 4;
  o.expert_groups = 4;
  o.topk_group = 2;
  const fs::path bad = tmp("violating.trace");
  write_trace(bad, k_violating, true);
  const TraceStats s = compute_trace_stats(bad, o);
  REQUIRE(s.group_limit.has_value());
  const GroupLimitStats& g = *s.group_limit;
  REQUIRE(g.checked);
  REQUIRE(g.tokens == 8);
  REQUIRE(g.tokens_over_limit == 3);
  REQUIRE(g.share_over_limit() == Approx(3.0 / 8.0));
  REQUIRE(g.max_groups == 3);
  REQUIRE(g.mean_groups == Approx(16.0 / 8.0));  // 1+3+2+1+3+1+2+3
  REQUIRE(g.histogram == std::vector<std::int64_t>{0, 3, 2, 3, 0});
  REQUIRE(g.first_step == 0);
  REQUIRE(g.first_layer == 0);
  REQUIRE_THAT(format_trace_stats(s, false),
               Contains("8 tokens checked (token x MoE layer), 3 over the limit (37.50 %), max 3 groups per token, "
                        "mean 2.000; first at step 0, layer 0"));
  REQUIRE_THAT(trace_stats_json(s), Contains("\"tokens_over_limit\": 3"));
  REQUIRE_THAT(trace_stats_json(s), Contains("\"max_groups\": 3"));

  const fs::path good = tmp("within.trace");
  write_trace(good, k_within, true);
  const TraceStats w = compute_trace_stats(good, o);
  REQUIRE(w.group_limit->checked);
  REQUIRE(w.group_limit->tokens == 8);
  REQUIRE(w.group_limit->tokens_over_limit == 0);
  REQUIRE(w.group_limit->max_groups == 2);
  REQUIRE(w.group_limit->mean_groups == Approx(13.0 / 8.0));
  REQUIRE(w.group_limit->first_step == -1);
  // Looser limit: the violating trace's tokens all fit in 3 groups.
  o.topk_group = 3;
  REQUIRE(compute_trace_stats(bad, o).group_limit->tokens_over_limit == 0);
  o.topk_group = 2;

  const fs::path no_ids = tmp("no_ids.trace");
  write_trace(no_ids, k_violating, false);
  const TraceStats n = compute_trace_stats(no_ids, o);
  REQUIRE(n.group_limit.has_value());
  REQUIRE_FALSE(n.group_limit->checked);
  REQUIRE_THAT(format_trace_stats(n, false), Contains("not checked, the check needs per-token expert ids"));
  REQUIRE_THAT(trace_stats_json(n), Contains("\"checked\": false"));
  // Without the options nothing is reported.
  REQUIRE_FALSE(compute_trace_stats(bad, StatsOptions{4, 100, 5}).group_limit.has_value());
  o.expert_groups = 3;  // does not divide 16 experts
  REQUIRE_THROWS_WITH(compute_trace_stats(bad, o), Contains("violating.trace") && Contains("divide the 16 experts"));
  fs::remove(bad);
  fs::remove(good);
  fs::remove(no_ids);
}

TEST_CASE("replay counts tokens over the model's group limit on the first pass only") {
  const fs::path bad = tmp("replay_violating.trace");
  const fs::path good = tmp("replay_within.trace");
  write_trace(bad, k_violating, true);
  write_trace(good, k_within, true);
  TraceReplayConfig rc;
  rc.file = bad.string();
  rc.expert_groups = 4;
  rc.topk_group = 2;
  TraceRoutingSource src(rc, 2, 16, 3, core::RandomStreams(1));
  std::vector<std::int32_t> counts(16);
  src.begin_step(StepContext{});
  GroupLimitReport r = src.group_limit_report();
  REQUIRE(r.tokens_checked == 4);
  REQUIRE(r.tokens_over_limit == 1);
  REQUIRE(r.first_step == 0);
  REQUIRE(r.first_layer == 0);
  for (int i = 0; i < 5; ++i) {  // the rest of the trace, then two loops over it
    src.begin_step(StepContext{});
    src.sample(1, 2, counts);
  }
  REQUIRE(src.loops() == 2);
  r = src.group_limit_report();
  REQUIRE(r.tokens_checked == 8);
  REQUIRE(r.tokens_over_limit == 3);
  REQUIRE(r.max_groups == 3);
  REQUIRE(r.first_step == 0);

  rc.file = good.string();
  TraceRoutingSource within(rc, 2, 16, 3, core::RandomStreams(1));
  within.begin_step(StepContext{});
  within.begin_step(StepContext{});
  REQUIRE(within.group_limit_report().tokens_checked == 8);
  REQUIRE(within.group_limit_report().tokens_over_limit == 0);
  REQUIRE(within.group_limit_report().first_step == -1);

  // No group limit (topk_group = expert_groups): nothing is checked.
  rc.file = bad.string();
  rc.topk_group = 4;
  TraceRoutingSource unlimited(rc, 2, 16, 3, core::RandomStreams(1));
  unlimited.begin_step(StepContext{});
  REQUIRE(unlimited.group_limit_report().tokens_checked == 0);
  fs::remove(bad);
  fs::remove(good);
}
