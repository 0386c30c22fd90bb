// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <catch2/catch.hpp>
#include <numeric>
#include <vector>

#include "core/statistics.hpp"
#include "tests/support/chi_square.hpp"
#include "workloads/multinomial.hpp"
#include "workloads/synthetic_router.hpp"
#include "workloads/trace_stats.hpp"

using namespace epsim;
using workloads::SyntheticRouterConfig;

namespace {

SyntheticRouterConfig plain(double s) {
  SyntheticRouterConfig c;
  c.zipf_exponent = s;
  c.topics = 1;
  c.topic_spread = 0.0;
  return c;
}

void step(workloads::SyntheticRouter& r, std::int64_t tokens, core::Time now = 0) {
  r.begin_step(workloads::StepContext{now, tokens, tokens, 0, {}});
}

double pearson(const std::vector<double>& a, const std::vector<double>& b) {
  const auto n = static_cast<double>(a.size());
  const double ma = std::accumulate(a.begin(), a.end(), 0.0) / n;
  const double mb = std::accumulate(b.begin(), b.end(), 0.0) / n;
  double sab = 0;
  double saa = 0;
  double sbb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  return sab / std::sqrt(saa * sbb);
}

}  // namespace

TEST_CASE("Zipf probabilities are capped at 1/k by water-filling (hand example)") {
  // Weights 1, 1/2, 1/3, 1/4 (sum 25/12): p = 0.48, 0.24, 0.16, 0.12. With k = 3 the cap is 1/3: the top
  // expert is pinned at 1/3 and the others share 2/3 in proportion 1/2 : 1/3 : 1/4 (sum 13/12).
  const auto p = workloads::capped_zipf_probabilities(4, 1.0, 3);
  REQUIRE(p[0] == Approx(1.0 / 3.0));
  REQUIRE(p[1] == Approx(0.5 / (13.0 / 12.0) * 2.0 / 3.0));
  REQUIRE(p[2] == Approx((1.0 / 3.0) / (13.0 / 12.0) * 2.0 / 3.0));
  REQUIRE(p[3] == Approx(0.25 / (13.0 / 12.0) * 2.0 / 3.0));
  const auto uncapped = workloads::capped_zipf_probabilities(4, 1.0, 2);
  REQUIRE(uncapped[0] == Approx(0.48));
  REQUIRE(uncapped[3] == Approx(0.12));
  for (double x : workloads::capped_zipf_probabilities(8, 0.0, 2)) {
    REQUIRE(x == Approx(0.125));
  }
}

TEST_CASE("every step's counts sum to tokens x top_k and never exceed the token count") {
  SyntheticRouterConfig c;
  c.zipf_exponent = 1.2;
  c.temporal_groups = 2;
  workloads::SyntheticRouter r(c, 4, 64, 8, core::RandomStreams(1));
  std::vector<std::int32_t> counts(64);
  for (std::int64_t tokens : {1, 3, 17, 256, 4096}) {
    step(r, tokens);
    for (int layer = 0; layer < 4; ++layer) {
      r.sample(layer, tokens, counts);
      REQUIRE(std::accumulate(counts.begin(), counts.end(), std::int64_t{0}) == tokens * 8);
      for (auto x : counts) {
        REQUIRE(x >= 0);
        REQUIRE(x <= tokens);
      }
    }
  }
}

TEST_CASE("long-run shares match the probabilities, each layer has its own hot set") {
  const int experts = 16;
  workloads::SyntheticRouter r(plain(1.0), 2, experts, 2, core::RandomStreams(4));
  REQUIRE(std::vector<int>(r.ranking(0).begin(), r.ranking(0).end()) !=
          std::vector<int>(r.ranking(1).begin(), r.ranking(1).end()));
  std::vector<double> total(experts, 0.0);
  std::vector<std::int32_t> counts(experts);
  const int steps = 2000;
  const std::int64_t tokens = 64;
  for (int s = 0; s < steps; ++s) {
    step(r, tokens);
    r.sample(0, tokens, counts);
    for (int e = 0; e < experts; ++e) {
      total[static_cast<std::size_t>(e)] += counts[static_cast<std::size_t>(e)];
    }
  }
  const double picks = static_cast<double>(steps * tokens * 2);
  const auto p = r.sorted_probabilities();
  for (int rank = 0; rank < experts; ++rank) {
    const double share = total[static_cast<std::size_t>(r.ranking(0)[static_cast<std::size_t>(rank)])] / picks;
    const double pr = p[static_cast<std::size_t>(rank)];
    INFO("rank " << rank);
    REQUIRE(std::abs(share - pr) < 5 * std::sqrt(pr * (1 - pr) / picks) + 1e-4);
  }
}

TEST_CASE("the default skew puts the hottest of 128 experts at about 4.2x the uniform share (GEM, Qwen3-235B)") {
  workloads::SyntheticRouter r(plain(0.4), 1, 128, 8, core::RandomStreams(6));
  REQUIRE(r.sorted_probabilities()[0] * 128.0 == Approx(4.2).margin(0.15));
  std::vector<double> total(128, 0.0);
  std::vector<std::int32_t> counts(128);
  for (int s = 0; s < 500; ++s) {
    step(r, 256);
    r.sample(0, 256, counts);
    for (int e = 0; e < 128; ++e) {
      total[static_cast<std::size_t>(e)] += counts[static_cast<std::size_t>(e)];
    }
  }
  const double mean = std::accumulate(total.begin(), total.end(), 0.0) / 128.0;
  REQUIRE(*std::max_element(total.begin(), total.end()) / mean == Approx(4.2).margin(0.3));
}

TEST_CASE("a planted temporal pair fires together in ~17 % of steps with ~3x the uniform share") {
  // GEM, Llama-4-Scout: experts 0 and 3 correlated at r = 0.88, active in ~17 % of steps with ~3x tokens.
  SyntheticRouterConfig c = plain(0.4);
  c.temporal_groups = 1;
  c.temporal_group_size = 2;
  workloads::SyntheticRouter r(c, 1, 16, 1, core::RandomStreams(9));
  const auto pair = r.temporal_experts(0);
  REQUIRE(pair.size() == 2);
  std::vector<double> a;
  std::vector<double> b;
  std::vector<std::int32_t> counts(16);
  const std::int64_t tokens = 512;
  int active = 0;
  core::RunningStats burst_share;
  const int steps = 20000;
  for (int s = 0; s < steps; ++s) {
    step(r, tokens);
    r.sample(0, tokens, counts);
    const double x = counts[static_cast<std::size_t>(pair[0])];
    const double y = counts[static_cast<std::size_t>(pair[1])];
    a.push_back(x);
    b.push_back(y);
    if (x > 0) {
      ++active;
      burst_share.add(x / static_cast<double>(tokens) * 16.0);
    }
  }
  REQUIRE(static_cast<double>(active) / steps == Approx(0.17).margin(0.02));
  REQUIRE(burst_share.mean() == Approx(3.0).margin(0.1));
  REQUIRE(pearson(a, b) > 0.85);
}

TEST_CASE("topics make batches differ, and a topic shift moves the distribution, no drift does not") {
  SyntheticRouterConfig c;
  c.topics = 2;
  c.topic_spread = 1.0;
  c.drift = SyntheticRouterConfig::Drift::shift;
  c.topic_mix = {1.0, 0.0};
  c.drift_target_mix = {0.0, 1.0};
  c.drift_start_s = 10.0;
  c.drift_duration_s = 0.0;
  workloads::SyntheticRouter r(c, 1, 32, 2, core::RandomStreams(2));
  REQUIRE(r.topic_mix(core::from_seconds(5.0))[0] == 1.0);
  REQUIRE(r.topic_mix(core::from_seconds(15.0))[1] == 1.0);
  std::int64_t next_id = 0;  // request ids are unique, as the engine's are
  auto window = [&](double t) {
    std::vector<double> sum(32, 0.0);
    std::vector<std::int32_t> counts(32);
    for (int s = 0; s < 300; ++s) {
      const workloads::RequestTokens req{next_id++, core::from_seconds(t), 64, true};
      r.begin_step(workloads::StepContext{core::from_seconds(t), 64, 64, 0, std::span(&req, 1)});
      r.sample(0, 64, counts);
      for (int e = 0; e < 32; ++e) {
        sum[static_cast<std::size_t>(e)] += counts[static_cast<std::size_t>(e)];
      }
    }
    return sum;
  };
  using workloads::cosine_distance;
  const auto before1 = window(1.0);
  const auto before2 = window(2.0);
  const auto after = window(20.0);
  REQUIRE(cosine_distance(before1, before2) < 0.01);
  REQUIRE(cosine_distance(before1, after) > 0.05);
}

TEST_CASE("the router is reproducible from the seed") {
  SyntheticRouterConfig c;
  c.temporal_groups = 1;
  workloads::SyntheticRouter a(c, 3, 32, 4, core::RandomStreams(77));
  workloads::SyntheticRouter b(c, 3, 32, 4, core::RandomStreams(77));
  std::vector<std::int32_t> ca(32);
  std::vector<std::int32_t> cb(32);
  for (int s = 0; s < 100; ++s) {
    step(a, 100);
    step(b, 100);
    a.sample(s % 3, 100, ca);
    b.sample(s % 3, 100, cb);
    REQUIRE(ca == cb);
  }
}

TEST_CASE("multinomial draws respect the cap and water-filling preserves the mass") {
  std::vector<double> p{0.7, 0.2, 0.1};
  workloads::water_fill_cap(p, 0.5);
  REQUIRE(p[0] == Approx(0.5));
  REQUIRE(p[1] == Approx(0.2 / 0.3 * 0.5));
  REQUIRE(p[0] + p[1] + p[2] == Approx(1.0));
  core::Rng rng(1);
  std::vector<std::int32_t> out(3);
  const std::vector<int> order{0, 1, 2};
  for (int i = 0; i < 100; ++i) {
    workloads::multinomial_capped(rng, 20, 10, p, order, out);
    REQUIRE(out[0] + out[1] + out[2] == 20);
    REQUIRE(*std::max_element(out.begin(), out.end()) <= 10);
  }
}

TEST_CASE("the alias-table path draws the same distribution as the binomial path") {
  // Small draws (picks <= 4 x categories) go through the alias table; compare both paths' long-run
  // shares with the probabilities.
  const std::vector<double> p{0.4, 0.3, 0.2, 0.1};
  const std::vector<int> order{0, 1, 2, 3};
  workloads::AliasTable alias;
  core::Rng rng(3);
  std::vector<double> small(4, 0.0);
  std::vector<double> large(4, 0.0);
  std::vector<std::int32_t> out(4);
  for (int i = 0; i < 20000; ++i) {
    workloads::multinomial_capped(rng, 10, 10, p, order, out, alias);  // alias path
    for (int e = 0; e < 4; ++e) {
      small[static_cast<std::size_t>(e)] += out[static_cast<std::size_t>(e)];
    }
    workloads::multinomial_capped(rng, 100, 100, p, order, out, alias);  // binomial path
    for (int e = 0; e < 4; ++e) {
      large[static_cast<std::size_t>(e)] += out[static_cast<std::size_t>(e)];
    }
  }
  for (int e = 0; e < 4; ++e) {
    const double pe = p[static_cast<std::size_t>(e)];
    REQUIRE(small[static_cast<std::size_t>(e)] / 200000.0 ==
            Approx(pe).margin(5 * std::sqrt(pe * (1 - pe) / 200000.0)));
    REQUIRE(large[static_cast<std::size_t>(e)] / 2000000.0 ==
            Approx(pe).margin(5 * std::sqrt(pe * (1 - pe) / 2000000.0)));
  }
}

TEST_CASE("fast sampling keeps the multinomial's means and variances") {
  // 4096 tokens x top-8 over 64 experts: most conditional binomials are normal-approximated. (s = 0.4
  // keeps every expert below the 1 / top_k cap, where counts would also be clipped at the token count.)
  const std::vector<double> p = workloads::capped_zipf_probabilities(64, 0.4, 8);
  REQUIRE(p[0] < 0.125);
  std::vector<int> order(64);
  std::iota(order.begin(), order.end(), 0);
  core::Rng rng(8);
  std::vector<std::int32_t> out(64);
  const std::int64_t picks = 4096 * 8;
  std::vector<core::RunningStats> s(64);
  for (int i = 0; i < 4000; ++i) {
    workloads::multinomial_capped(rng, picks, 4096, p, order, out, /*approximate=*/true);
    REQUIRE(std::accumulate(out.begin(), out.end(), std::int64_t{0}) == picks);
    for (int e = 0; e < 64; ++e) {
      s[static_cast<std::size_t>(e)].add(out[static_cast<std::size_t>(e)]);
    }
  }
  for (int e = 0; e < 64; e += 7) {
    const double pe = p[static_cast<std::size_t>(e)];
    const double mean = static_cast<double>(picks) * pe;
    const double var = mean * (1.0 - pe);
    INFO("expert " << e);
    // Sample mean within 5 standard errors; sample variance within 10 % (4000 draws: ~2.2 % s.e.).
    REQUIRE(std::abs(s[static_cast<std::size_t>(e)].mean() - mean) < 5.0 * std::sqrt(var / 4000.0));
    REQUIRE(s[static_cast<std::size_t>(e)].variance() == Approx(var).epsilon(0.1));
  }
}

TEST_CASE("expected load and co-selection of requests follow the probabilities, by hand with one topic") {
  const int experts = 16;
  const int k = 2;
  workloads::SyntheticRouter r(plain(1.0), 2, experts, k, core::RandomStreams(4));
  const auto p = r.sorted_probabilities();
  // A prefill of 100 tokens on GPU 0 and 10 decode tokens on GPU 1: n x k x p of each expert.
  const std::vector<workloads::RequestTokens> reqs{{0, 0, 100, true, 0}, {1, 0, 10, false, 1}};
  const std::vector<int> origin{0, 1};
  std::vector<double> out(2 * 2 * experts, 0.0);
  REQUIRE(r.expected_load(reqs, origin, 2, out));
  for (int l = 0; l < 2; ++l) {
    for (int rank = 0; rank < experts; ++rank) {
      const auto e = static_cast<std::size_t>(r.ranking(l)[static_cast<std::size_t>(rank)]);
      const double pr = p[static_cast<std::size_t>(rank)];
      REQUIRE(out[(static_cast<std::size_t>(l) * 2 + 0) * experts + e] == Approx(100.0 * k * pr));
      REQUIRE(out[(static_cast<std::size_t>(l) * 2 + 1) * experts + e] == Approx(10.0 * k * pr));
    }
  }
  // Co-selection per token: k (k - 1) p_i p_j off the diagonal, 0 on it.
  std::vector<double> co(static_cast<std::size_t>(experts * experts), 0.0);
  r.expected_coselection(0, 0, co);
  const auto rank_of = [&](int e) {
    const auto rk = r.ranking(0);
    return static_cast<std::size_t>(std::find(rk.begin(), rk.end(), e) - rk.begin());
  };
  for (int i = 0; i < experts; ++i) {
    for (int j = 0; j < experts; ++j) {
      const double want = i == j ? 0.0 : k * (k - 1) * p[rank_of(i)] * p[rank_of(j)];
      REQUIRE(co[static_cast<std::size_t>(i * experts + j)] == Approx(want));
    }
  }
}

TEST_CASE("expected cross-layer transitions follow each layer's probabilities, by hand with one topic") {
  const int experts = 16;
  const int k = 2;
  workloads::SyntheticRouter r(plain(1.0), 3, experts, k, core::RandomStreams(4));
  const auto p = r.sorted_probabilities();
  const auto rank_in = [&](int l, int e) {
    const auto rk = r.ranking(l);
    return static_cast<std::size_t>(std::find(rk.begin(), rk.end(), e) - rk.begin());
  };
  // One topic, both phases alike: a token picks i in layer 1 and j in layer 2 with k p_i x k p_j, where
  // each layer ranks its experts by its own hot set.
  std::vector<double> tr(static_cast<std::size_t>(experts * experts), 0.0);
  r.expected_transitions(1, 0, tr);
  double sum = 0.0;
  for (int i = 0; i < experts; ++i) {
    for (int j = 0; j < experts; ++j) {
      const double want = k * p[rank_in(1, i)] * k * p[rank_in(2, j)];
      REQUIRE(tr[static_cast<std::size_t>(i * experts + j)] == Approx(want));
      sum += tr[static_cast<std::size_t>(i * experts + j)];
    }
  }
  REQUIRE(sum == Approx(k * k));  // k x k pairs per token
}

TEST_CASE("origin-aware routing splits each expert's tokens over the GPUs by their requests") {
  const int experts = 16;
  SyntheticRouterConfig c = plain(1.0);
  workloads::SyntheticRouter independent(c, 1, experts, 2, core::RandomStreams(4));
  c.origin_aware = true;
  workloads::SyntheticRouter aware(c, 1, experts, 2, core::RandomStreams(4));
  // One topic: GPU 0 serves 300 of the step's 400 tokens, GPU 1 the other 100, so every expert's tokens
  // split 3 : 1 (largest remainder: within one token).
  const std::vector<workloads::RequestTokens> reqs{{0, 0, 300, true, 0}, {1, 0, 100, true, 1}};
  std::vector<std::int32_t> counts(experts);
  std::vector<std::int32_t> split(2 * experts);
  for (workloads::SyntheticRouter* r : {&independent, &aware}) {
    r->begin_step(workloads::StepContext{0, 400, 400, 0, reqs});
    r->sample(0, 400, counts);
  }
  REQUIRE_FALSE(independent.origin_counts(0, 2, 400, split));
  REQUIRE(aware.origin_counts(0, 2, 400, split));
  for (int e = 0; e < experts; ++e) {
    const std::int32_t n = counts[static_cast<std::size_t>(e)];
    const std::int32_t a = split[static_cast<std::size_t>(e)];
    const std::int32_t b = split[static_cast<std::size_t>(experts + e)];
    REQUIRE(a + b == n);
    REQUIRE(std::abs(a - 0.75 * n) <= 1.0);
  }
}

TEST_CASE("origin-aware routing gives a GPU without requests in the step none of the tokens") {
  SyntheticRouterConfig c = plain(1.0);
  c.origin_aware = true;
  workloads::SyntheticRouter r(c, 1, 16, 2, core::RandomStreams(4));
  // Three GPUs, requests on GPUs 0 and 1 only: every expert's tokens stay off GPU 2, expert after expert.
  const std::vector<workloads::RequestTokens> reqs{{0, 0, 200, true, 0}, {1, 0, 100, true, 1}};
  std::vector<std::int32_t> counts(16);
  std::vector<std::int32_t> split(3 * 16);
  r.begin_step(workloads::StepContext{0, 300, 300, 0, reqs});
  r.sample(0, 300, counts);
  REQUIRE_FALSE(r.origin_counts(0, 1, 300, split));  // fewer GPUs than origins seen
  REQUIRE(r.origin_counts(0, 3, 300, split));
  for (std::size_t e = 0; e < 16; ++e) {
    REQUIRE(split[32 + e] == 0);
    REQUIRE(split[e] + split[16 + e] == counts[e]);
  }
}

TEST_CASE("expected load caps each expert at 1 / top_k as the sampled steps do") {
  // One topic spread wide enough that its hottest expert wants more than a token can give it (1 / k):
  // the prediction must match what the router samples, not the uncapped distribution.
  SyntheticRouterConfig c = plain(1.2);
  c.topic_spread = 2.0;
  const int experts = 16;
  const int k = 4;
  workloads::SyntheticRouter r(c, 1, experts, k, core::RandomStreams(9));
  const std::vector<workloads::RequestTokens> reqs{{0, 0, 1000, true, 0}};
  const std::vector<int> origin{0};
  std::vector<double> predicted(experts, 0.0);
  REQUIRE(r.expected_load(reqs, origin, 1, predicted));
  REQUIRE(std::accumulate(predicted.begin(), predicted.end(), 0.0) == Approx(1000.0 * k));
  REQUIRE(*std::max_element(predicted.begin(), predicted.end()) <= 1000.0 * (1.0 + 1e-9));
  // Independently: the mean of sampled 1000-token prefill steps of that request.
  std::vector<core::RunningStats> s(experts);
  std::vector<std::int32_t> out(experts);
  for (int i = 0; i < 3000; ++i) {
    r.begin_step(workloads::StepContext{0, 1000, 1000, 0, reqs});
    r.sample(0, 1000, out);
    for (int e = 0; e < experts; ++e) {
      s[static_cast<std::size_t>(e)].add(out[static_cast<std::size_t>(e)]);
    }
  }
  // A capped expert's count is min(X, 1000) with X ~ Binomial(4000, 1/4) ~ Normal(1000, sigma^2): its
  // mean falls short of the cap by sigma / sqrt(2 pi) = 10.9 tokens; the sampler places that overflow on
  // uncapped experts (the first in ranking order with room), so an uncapped expert gains at most all of it.
  const double sigma = std::sqrt(4000.0 * 0.25 * 0.75);
  const double shortfall = sigma / std::sqrt(2.0 * M_PI);
  const auto capped = static_cast<int>(std::count(predicted.begin(), predicted.end(), 1000.0));
  REQUIRE(capped >= 1);  // the case is the one that needs the cap
  for (int e = 0; e < experts; ++e) {
    const auto& st = s[static_cast<std::size_t>(e)];
    const double pred = predicted[static_cast<std::size_t>(e)];
    INFO("expert " << e << " predicted " << pred << " sampled " << st.mean());
    const double se = st.stddev() / std::sqrt(3000.0);
    if (pred == 1000.0) {
      REQUIRE(std::abs(pred - shortfall - st.mean()) <= 5.0 * se + 0.5);
    } else {
      REQUIRE(st.mean() >= pred - 5.0 * se - 0.5);
      REQUIRE(st.mean() <= pred + 5.0 * se + 0.5 + capped * shortfall);
    }
  }
}

TEST_CASE("each topic is capped on its own, so no topic's tokens pick an expert more often than they are tokens") {
  // Two topics far apart (spread 2, s = 1.2, 16 experts, top-4): some topic's hottest expert wants more
  // than 1 / k of its picks. Capping only the step's mix would let the other topic dilute that expert
  // below the cap while the first topic's tokens still picked it more times than they are tokens.
  SyntheticRouterConfig c = plain(1.2);
  c.topics = 2;
  c.topic_spread = 2.0;
  const int experts = 16;
  const int k = 4;
  workloads::SyntheticRouter r(c, 1, experts, k, core::RandomStreams(9));
  std::int64_t other = 1;
  while (r.topic_of(other, 0) == r.topic_of(0, 0) && other < 64) {
    ++other;
  }
  REQUIRE(r.topic_of(other, 0) != r.topic_of(0, 0));
  // Each request on a GPU of its own: per GPU the expectation is its tokens x k spread over experts, none
  // above its tokens, and the case is one where the cap binds.
  const std::vector<workloads::RequestTokens> large{{0, 0, 1000, true, 0}, {other, 0, 1000, true, 1}};
  std::vector<double> per_gpu(2 * experts, 0.0);
  REQUIRE(r.expected_load(large, std::vector<int>{0, 1}, 2, per_gpu));
  int at_cap = 0;
  for (std::size_t g = 0; g < 2; ++g) {
    const auto row = std::span<const double>(per_gpu).subspan(g * experts, experts);
    REQUIRE(std::accumulate(row.begin(), row.end(), 0.0) == Approx(1000.0 * k));
    REQUIRE(*std::max_element(row.begin(), row.end()) <= 1000.0 * (1.0 + 1e-9));
    at_cap +=
        static_cast<int>(std::count_if(row.begin(), row.end(), [](double x) { return x > 1000.0 * (1.0 - 1e-9); }));
  }
  REQUIRE(at_cap >= 1);
  // Small steps of both topics (128 picks, within 8 per expert) come from the prebuilt per-topic tables
  // even though a topic is capped, and follow the expectation: 20 tokens of one topic and 12 of the other.
  // (A count is clipped at the step's 32 tokens; the hottest expert's ~21 sit 2.6 sd below, so clipping
  // moves ~0.006 picks a step: far below what the test can see.)
  const std::vector<workloads::RequestTokens> small{{0, 0, 20, true, 0}, {other, 0, 12, true, 0}};
  std::vector<double> expected(experts, 0.0);
  REQUIRE(r.expected_load(small, std::vector<int>{0, 0}, 1, expected));
  const int steps = 20000;
  std::vector<double> seen(experts, 0.0);
  std::vector<std::int32_t> out(experts);
  for (int s = 0; s < steps; ++s) {
    r.begin_step(workloads::StepContext{0, 32, 32, 0, small});
    r.sample(0, 32, out);
    for (std::size_t e = 0; e < static_cast<std::size_t>(experts); ++e) {
      seen[e] += out[e];
    }
  }
  CHECK(r.table_draws() == steps);
  for (double& x : expected) {
    x *= steps;
  }
  // 15 degrees of freedom: the 99.99 % quantile is 44.3. An expert both topics leave empty is skipped.
  CHECK(test::chi_square(seen, expected) < 44.3);
}

TEST_CASE("small draws from the per-topic tables follow the step's mix of topics and phases exactly") {
  // 4 topics, 64 experts, top-4: steps of 3 requests (two topics or more, prefill and decode) draw 64 picks,
  // within 8 per expert, so they come from the prebuilt topic x phase tables. Their long-run counts must
  // be the mix expected_load computes from the same topics (no cap binds at s = 0.4).
  SyntheticRouterConfig c;
  c.zipf_exponent = 0.4;
  c.topics = 4;
  c.topic_spread = 0.5;
  c.decode_zipf_exponent = 0.6;
  workloads::SyntheticRouter r(c, 1, 64, 4, core::RandomStreams(21));
  const std::vector<workloads::RequestTokens> reqs{{0, 0, 10, true, 0}, {1, 0, 5, false, 0}, {2, 0, 1, false, 0}};
  std::vector<double> expected(64, 0.0);
  REQUIRE(r.expected_load(reqs, std::vector<int>{0, 0, 0}, 1, expected));
  REQUIRE(r.topic_of(0, 0) != r.topic_of(1, 0));  // at least two topics in the mix (seed chosen for it)
  const int steps = 20000;
  std::vector<double> seen(64, 0.0);
  std::vector<std::int32_t> out(64);
  for (int s = 0; s < steps; ++s) {
    r.begin_step(workloads::StepContext{0, 16, 10, 6, reqs});
    r.sample(0, 16, out);
    REQUIRE(std::accumulate(out.begin(), out.end(), 0) == 64);
    for (std::size_t e = 0; e < 64; ++e) {
      seen[e] += out[e];
    }
  }
  CHECK(r.table_draws() == steps);  // every draw came from the prebuilt tables
  for (double& x : expected) {
    x *= steps;
  }
  // 63 degrees of freedom: the 99.99 % quantile is 112.
  CHECK(test::chi_square(seen, expected) < 112.0);
}

TEST_CASE("the unsorted multinomial draws what the sorted one draws, clipped picks placed alike") {
  // Categories in index order; p made so counts above the cap (and so overflow placement) are common. The
  // mean of every category over 100,000 draws must agree between the two (5 standard errors), on the
  // alias path (8 picks, cap 4) and on the binomial path (20 picks, cap 10).
  const std::vector<double> p{0.2, 0.45, 0.35};
  const std::vector<int> sorted{1, 2, 0};
  for (const auto& [picks, cap] : {std::pair<std::int64_t, std::int64_t>{8, 4}, {20, 10}}) {
    core::Rng a(5);
    core::Rng b(6);
    workloads::AliasTable alias_a;
    workloads::AliasTable alias_b;
    std::vector<int> order;
    std::vector<std::int32_t> out(3);
    std::vector<core::RunningStats> sa(3);
    std::vector<core::RunningStats> sb(3);
    for (int i = 0; i < 100000; ++i) {
      workloads::multinomial_capped(a, picks, cap, p, sorted, out, alias_a);
      for (std::size_t e = 0; e < 3; ++e) {
        sa[e].add(out[e]);
      }
      workloads::multinomial_capped_unsorted(b, picks, cap, p, out, alias_b, order);
      REQUIRE(std::accumulate(out.begin(), out.end(), std::int64_t{0}) == picks);
      REQUIRE(*std::max_element(out.begin(), out.end()) <= cap);
      for (std::size_t e = 0; e < 3; ++e) {
        sb[e].add(out[e]);
      }
    }
    for (std::size_t e = 0; e < 3; ++e) {
      INFO("picks " << picks << ", category " << e);
      const double se = std::sqrt((sa[e].variance() + sb[e].variance()) / 100000.0);
      CHECK(std::abs(sa[e].mean() - sb[e].mean()) < 5.0 * se);
    }
  }
}
