// SPDX-License-Identifier: Apache-2.0
// Prefix caching (sim/prefix_cache.hpp) by hand: block keys of segment lists, hits through the
// scheduler's admissions (only the uncached tokens are computed, over the cached context), LRU and LFU
// eviction order under a tiny budget, fetches from a host tier timed on the link or recomputed when
// cheaper; and the hit rate of Zipf-popular prefixes under LRU against Che's approximation.
#include <catch2/catch.hpp>

#include <boost/math/tools/roots.hpp>
#include <boost/random/discrete_distribution.hpp>
#include <cmath>
#include <vector>

#include "core/random_streams.hpp"
#include "sim/block_hash.hpp"
#include "sim/prefix_cache.hpp"
#include "sim/scheduler.hpp"

using namespace epsim;
using namespace epsim::serving;

namespace {

using Segments = std::vector<workloads::ContentSegment>;

RequestState req(std::int64_t id, Segments content, std::int64_t output) {
  RequestState r;
  r.spec.id = id;
  for (const auto& s : content) {
    r.spec.prompt_tokens += s.tokens;
  }
  r.spec.content = std::move(content);
  r.spec.output_tokens = output;
  return r;
}

std::vector<std::uint64_t> keys(const workloads::RequestSpec& spec, std::int64_t block, int n) {
  BlockCursor c;
  std::vector<std::uint64_t> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(next_block_key(spec, block, c));
  }
  return out;
}

// One rank of `blocks` KV blocks of 4 tokens, no watermark, with a prefix cache.
Scheduler cached_rank(std::int64_t blocks, EvictionPolicy policy = EvictionPolicy::lru,
                      std::vector<CacheTier> tiers = {}) {
  SchedulerConfig cfg;
  cfg.max_batch_tokens = 4096;
  cfg.max_running_requests = 16;
  cfg.kv_block_tokens = 4;
  cfg.kv_watermark = 0.0;
  Scheduler s(1, cfg, blocks);
  PrefixCacheConfig pc;
  pc.enabled = true;
  pc.eviction = policy;
  pc.tiers = std::move(tiers);
  s.enable_prefix_cache(pc, 1e6, 1);  // 1 MB blocks: 100 us per block at 10 GB/s
  return s;
}

// Queues request `i` at `now` and runs the rank until it is idle; returns the first batch's entry.
BatchEntry serve(Scheduler& s, std::vector<RequestState>& reqs, int i, core::Time& now) {
  REQUIRE(s.enqueue(0, i, reqs));
  Batch b;
  BatchEntry first{};
  bool seen = false;
  while (!s.idle()) {
    if (!s.form_batch(reqs, b, now)) {
      const core::Time ready = s.next_ready_ns(reqs, now);
      REQUIRE(ready > now);
      now = ready;
      continue;
    }
    if (!seen) {
      first = b.entries.front();
      seen = true;
    }
    now += 10;
    s.complete(b, reqs, now, {});
  }
  return first;
}

}  // namespace

TEST_CASE("block keys: prompts share a block's key exactly when their content agrees up to its end") {
  const RequestState a = req(0, {{1, 8}, {2, 5}}, 3);
  const RequestState b = req(1, {{1, 8}, {3, 6}}, 2);
  const RequestState c = req(2, {{1, 6}, {2, 7}}, 2);
  const auto ka = keys(a.spec, 4, 3);
  const auto kb = keys(b.spec, 4, 3);
  const auto kc = keys(c.spec, 4, 3);
  REQUIRE(ka[0] == kb[0]);  // tokens 0-3, 4-7: segment 1 in both
  REQUIRE(ka[1] == kb[1]);
  REQUIRE(ka[2] != kb[2]);  // tokens 8-11: segment 2 against segment 3
  REQUIRE(kc[0] == ka[0]);  // tokens 0-3 of segment 1 in both
  REQUIRE(kc[1] != ka[1]);  // tokens 4-7: 1:4-5 + 2:0-1 against 1:4-7
  // Content of its own (no segments) is never shared, even between equal lengths.
  REQUIRE(keys(req(5, {}, 1).spec, 4, 1) != keys(req(6, {}, 1).spec, 4, 1));
  // The answer continues the chain: a next turn repeating prompt + answer shares those blocks.
  RequestState turn = req(7, {{1, 8}}, 8);
  turn.spec.output_content_id = 99;
  const RequestState next = req(8, {{1, 8}, {99, 8}, {4, 3}}, 1);
  REQUIRE(keys(turn.spec, 4, 4) == keys(next.spec, 4, 4));
}

TEST_CASE("prefix hits through admissions: cached blocks skip compute but stay context") {
  Scheduler s = cached_rank(100);
  std::vector<RequestState> reqs{req(0, {{1, 8}, {2, 5}}, 3), req(1, {{1, 8}, {3, 6}}, 2), req(2, {{1, 8}, {2, 5}}, 3),
                                 req(3, {{1, 8}, {2, 4}}, 1)};
  core::Time now = 0;
  // A: nothing cached; 13 prompt tokens, then 2 decodes. Its KV then holds 13 + 3 - 1 = 15 tokens: three
  // full blocks (0-11) stay cached.
  BatchEntry e = serve(s, reqs, 0, now);
  REQUIRE((e.tokens == 13 && e.context == 0));
  REQUIRE(reqs[0].cached_tokens == 0);
  REQUIRE(s.prefix_cache(0).cached_blocks() == 3);
  REQUIRE(s.kv(0).free_blocks() == 97);
  REQUIRE(s.kv_used_tokens() == 0);  // cached, unreferenced blocks count as free
  // B shares segment 1 (blocks 0 and 1): 6 of its 14 tokens computed over 8 of context.
  e = serve(s, reqs, 1, now);
  REQUIRE((e.tokens == 6 && e.context == 8 && e.prefill));
  REQUIRE(reqs[1].cached_tokens == 8);
  REQUIRE(s.prefix_cache(0).cached_blocks() == 4);  // + its block 2 (segment 3)
  // C repeats A's prompt: blocks 0-2 (12 tokens) hit; the last token is computed for its logits.
  e = serve(s, reqs, 2, now);
  REQUIRE((e.tokens == 1 && e.context == 12));
  // D's 12 tokens are three blocks A cached, but its last token must be computed: two blocks hit.
  e = serve(s, reqs, 3, now);
  REQUIRE((e.tokens == 4 && e.context == 8));
  REQUIRE(reqs[3].cached_tokens == 8);
  REQUIRE(s.prefix_cache(0).tally().evicted_blocks == 0);
}

TEST_CASE("eviction under a tiny budget: LRU takes the least recent, deepest block first, LFU the least used") {
  // Six blocks of 4 tokens; each request is 8 shared tokens + 1 of its own (3 blocks while running, two
  // cached after). R1 twice, then R2, then R3 needs a block: someone's block goes.
  for (const EvictionPolicy policy : {EvictionPolicy::lru, EvictionPolicy::lfu}) {
    Scheduler s = cached_rank(6, policy);
    std::vector<RequestState> reqs{req(0, {{10, 8}, {100, 1}}, 1), req(1, {{10, 8}, {101, 1}}, 1),
                                   req(2, {{20, 8}, {102, 1}}, 1), req(3, {{30, 8}, {103, 1}}, 1),
                                   req(4, {{10, 8}, {104, 1}}, 1), req(5, {{20, 8}, {105, 1}}, 1)};
    core::Time now = 0;
    for (int i : {0, 1, 2, 3}) {
      serve(s, reqs, i, now);
    }
    REQUIRE(reqs[1].cached_tokens == 8);
    REQUIRE(s.prefix_cache(0).tally().evicted_blocks == 1);
    serve(s, reqs, 4, now);  // R1's content again
    if (policy == EvictionPolicy::lru) {
      // R3 evicted the least recent block: R1's deepest (released first, so older than its block 0).
      REQUIRE(reqs[4].cached_tokens == 4);
    } else {
      // LFU: R1's blocks were used twice, R2's once: R2's deepest went.
      REQUIRE(reqs[4].cached_tokens == 8);
      serve(s, reqs, 5, now);
      REQUIRE(reqs[5].cached_tokens == 4);
    }
  }
}

TEST_CASE("host tier: an evicted prefix is fetched back on the link, or recomputed when that is cheaper") {
  for (const bool cheap_recompute : {false, true}) {
    Scheduler s = cached_rank(3, EvictionPolicy::lru, {CacheTier{"host", 1.0, 10.0}});
    std::vector<RequestState> reqs{req(0, {{10, 8}, {100, 1}}, 1), req(1, {{20, 8}, {101, 1}}, 1),
                                   req(2, {{10, 8}, {102, 1}}, 1)};
    core::Time now = 0;
    serve(s, reqs, 0, now);
    serve(s, reqs, 1, now);  // needs 3 blocks: R1's two cached blocks go down to the host tier
    REQUIRE(s.prefix_cache(0).tally().evicted_blocks == 2);
    REQUIRE(s.prefix_cache(0).tier_blocks(0) == 2);
    // Two 1 MB blocks at 10 GB/s: 2 x 100 us. Recomputing 8 tokens at 1 ms a token costs more; at 1 ns
    // a token less.
    s.set_recompute_ns_per_token(cheap_recompute ? 1.0 : 1e6);
    now = 1'000'000;
    const BatchEntry e = serve(s, reqs, 2, now);
    if (cheap_recompute) {
      REQUIRE((e.tokens == 9 && e.context == 0));
      REQUIRE(reqs[2].cached_tokens == 0);
      REQUIRE(s.prefix_cache(0).tally().recomputed_blocks == 2);
      REQUIRE(reqs[2].first_token_ns == 1'000'010);
    } else {
      REQUIRE((e.tokens == 1 && e.context == 8));
      REQUIRE(reqs[2].cached_tokens == 8);
      REQUIRE(reqs[2].ready_ns == 1'000'000 + 200'000);
      REQUIRE(reqs[2].first_token_ns == 1'200'000 + 10);  // its prefill waits for the blocks
      REQUIRE(s.prefix_cache(0).tally().fetched_blocks == 2);
      REQUIRE(s.prefix_cache(0).tally().fetch_ns == Approx(200'000.0));
    }
  }
}

TEST_CASE("Zipf-popular prefixes under LRU: the hit rate matches Che's approximation") {
  // N prefixes of one block each, Zipf(alpha) popular, requested independently; the cache holds C of
  // them. Che et al. (2002): an object of popularity p hits with 1 - exp(-p T), T solving
  // sum_i (1 - exp(-p_i T)) = C; the overall hit rate is sum_i p_i (1 - exp(-p_i T)).
  const int n = 500;
  const std::int64_t capacity = 50;
  const std::int64_t block = 4;
  for (const double alpha : {0.6, 0.9, 1.2}) {
    std::vector<double> p(n);
    double z = 0.0;
    for (int i = 0; i < n; ++i) {
      p[static_cast<std::size_t>(i)] = std::pow(i + 1.0, -alpha);
      z += p[static_cast<std::size_t>(i)];
    }
    for (double& x : p) {
      x /= z;
    }
    const auto occupancy = [&](double t) {
      double sum = 0.0;
      for (const double x : p) {
        sum += 1.0 - std::exp(-x * t);
      }
      return sum - static_cast<double>(capacity);
    };
    boost::uintmax_t iters = 200;
    const auto [lo, hi] =
        boost::math::tools::bisect(occupancy, 1.0, 1e9, boost::math::tools::eps_tolerance<double>(40), iters);
    const double t = 0.5 * (lo + hi);
    double che = 0.0;
    for (const double x : p) {
      che += x * (1.0 - std::exp(-x * t));
    }
    // The cache: C blocks for prefixes and one for the running request's own last token.
    PrefixCacheConfig cfg;
    cfg.enabled = true;
    PrefixCache cache(cfg, capacity + 1, block, 1.0, 1);
    KvCache kv(capacity + 1, block);
    core::Rng rng = core::RandomStreams(7).stream("che");
    boost::random::discrete_distribution<int> pick(p.begin(), p.end());
    std::int64_t hits = 0;
    std::int64_t measured = 0;
    const int warmup = 20000;
    const int total = 220000;
    RequestState r;
    for (int i = 0; i < total; ++i) {
      r.spec.id = i;
      r.spec.content = {{static_cast<std::uint64_t>(pick(rng)) + 1, block},
                        {1000000 + static_cast<std::uint64_t>(i), 1}};
      r.spec.prompt_tokens = block + 1;
      r.spec.output_tokens = 1;
      const std::int64_t hit = cache.acquire(r, 1, kv, 0, 0.0);
      const std::int64_t extra = kv.extra_for(r.kv_blocks, block + 1);
      if (!kv.can_take(extra)) {
        cache.evict(extra - kv.free_blocks(), kv);
      }
      kv.take(extra);
      r.kv_blocks += extra;
      cache.release(r, block + 1, kv);  // its prefix block stays cached
      if (i >= warmup) {
        hits += hit > 0 ? 1 : 0;
        ++measured;
      }
    }
    const double rate = static_cast<double>(hits) / static_cast<double>(measured);
    INFO("alpha " << alpha << ": simulated " << rate << ", Che " << che);
    REQUIRE(rate == Approx(che).margin(0.01));
  }
}
