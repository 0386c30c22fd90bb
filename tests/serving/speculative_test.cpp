// SPDX-License-Identifier: Apache-2.0
// Speculative decoding (docs/serving.md): the acceptance arithmetic, the scheduler's verify entries,
// token counts and KV blocks with every draft accepted or none, the expert load of verify tokens, the
// draft model's cost priced by hand, and TPOT against step / E[A + 1] at low load.
#include <catch2/catch.hpp>

#include <cmath>
#include <numeric>
#include <vector>

#include "core/error.hpp"
#include "hardware/roofline.hpp"
#include "policies/even_routing.hpp"
#include "policies/linear_placement.hpp"
#include "sim/acceptance_model.hpp"
#include "sim/scheduler.hpp"
#include "sim/simulator.hpp"
#include "tests/support/tiny_model.hpp"

using namespace epsim;
using namespace epsim::serving;

namespace {

RequestState req(std::int64_t id, std::int64_t prompt, std::int64_t output) {
  RequestState r;
  r.spec = workloads::RequestSpec{id, 0, prompt, output};
  return r;
}

// Records every token's gap.
class TokenGaps final : public Observer {
 public:
  std::vector<core::Time> gaps;
  std::int64_t verifies = 0;
  std::int64_t accepted = 0;
  void on_token(const RequestState& /*r*/, core::Time gap_ns) override { gaps.push_back(gap_ns); }
  void on_verify(const RequestState& /*r*/, std::int64_t /*drafted*/, std::int64_t a) override {
    ++verifies;
    accepted += a;
  }
};

// Spreads every step's token-expert pairs evenly over the 4 experts and records the tokens it routed.
class EvenSource final : public workloads::RoutingSource {
 public:
  std::vector<std::int64_t> step_tokens;  // per step: the tokens begin_step announced
  std::vector<std::int64_t> sampled;      // per sample() call: the tokens routed
  int num_moe_layers() const override { return 1; }
  int num_experts() const override { return 4; }
  int top_k() const override { return 2; }
  void begin_step(const workloads::StepContext& ctx) override { step_tokens.push_back(ctx.tokens); }
  void sample(int, std::int64_t tokens, std::span<std::int32_t> out) override {
    sampled.push_back(tokens);
    for (std::size_t e = 0; e < out.size(); ++e) {
      out[e] = static_cast<std::int32_t>(tokens * 2 / 4 + (static_cast<std::int64_t>(e) < tokens * 2 % 4 ? 1 : 0));
    }
  }
};

// Records the steps.
class Steps final : public Observer {
 public:
  std::vector<StepRecord> steps;
  void on_step(const StepRecord& s) override { steps.push_back(s); }
};

SpeculativeConfig draft_model_config(std::vector<double> rates) {
  SpeculativeConfig c;
  c.method = SpeculativeMethod::draft_model;
  c.draft_tokens = static_cast<int>(rates.size());
  c.acceptance = AcceptanceModel::from_rates(rates);
  c.draft = DraftModelSize{1, 1024, 2048, 8, 8, 0};  // vocabulary: the target's 1000
  return c;
}

// One GPU holding the tiny model's 4 experts, one request of `prompt` + `output` tokens.
SimulationParts one_gpu(std::int64_t prompt, std::int64_t output, const SpeculativeConfig& spec, EvenSource*& source) {
  auto src = std::make_unique<EvenSource>();
  source = src.get();
  SimulationParts p{
      .model = test::tiny_model(2),
      .cost = std::make_unique<hardware::RooflineCostModel>(test::paper_gpu(), std::vector<double>{1.0}),
      .topology = hardware::Topology(1, 1, hardware::LinkSpec{100.0, 2.0}, hardware::LinkSpec{10.0, 5.0}),
      .network = nullptr,
      .collectives = {.model = hardware::CollectiveModelKind::ports},
      .routing_source = std::move(src),
      .workload = {},
      .serving = {},
      .seed = 7,
  };
  p.workload.arrivals.rate_rps = 1.0;
  p.workload.num_requests = 1;
  p.workload.prompt.value = prompt;
  p.workload.output.value = output;
  p.pools.push_back(colocated_pool(1, 1,
                                   policies::LinearPlacement().place(policies::PlacementInput::shape(1, 4, 1, 1, 4, 1)),
                                   [] { return std::make_unique<policies::EvenRouting>(); }));
  p.serving.speculative = spec;
  return p;
}

}  // namespace

TEST_CASE("acceptance: per-position rates and a length distribution give P(A = a) and E[A] by hand") {
  const std::vector<double> rates{0.8, 0.6, 0.5};
  const AcceptanceModel m = AcceptanceModel::from_rates(rates);
  REQUIRE(m.draft_tokens() == 3);
  // P(A = 0) = 1 - 0.8; P(1) = 0.8 x 0.4; P(2) = 0.8 x 0.6 x 0.5; P(3) = 0.8 x 0.6 x 0.5.
  CHECK(m.probability(0) == Approx(0.2));
  CHECK(m.probability(1) == Approx(0.32));
  CHECK(m.probability(2) == Approx(0.24));
  CHECK(m.probability(3) == Approx(0.24));
  // E[A] = 0.8 + 0.8 x 0.6 + 0.8 x 0.6 x 0.5.
  CHECK(m.mean_accepted() == Approx(1.52));
  const std::vector<double> lengths{0.1, 0.2, 0.3, 0.4};
  const AcceptanceModel d = AcceptanceModel::from_lengths(lengths);
  CHECK(d.mean_accepted() == Approx(0.2 + 0.6 + 1.2));
  // Draws: the empirical mean within 4 standard errors, the same stream gives the same draws, a cap
  // holds.
  core::Rng a(11);
  core::Rng b(11);
  double sum = 0.0;
  double sq = 0.0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const int x = m.draw(a, 3);
    REQUIRE(x == m.draw(b, 3));
    sum += x;
    sq += x * x;
  }
  const double var = sq / n - (sum / n) * (sum / n);
  CHECK(std::abs(sum / n - 1.52) < 4.0 * std::sqrt(var / n));
  for (int i = 0; i < 1000; ++i) {
    REQUIRE(m.draw(a, 1) <= 1);
  }
  CHECK_THROWS(AcceptanceModel::from_lengths(std::vector<double>{0.5, 0.4}));
}

TEST_CASE("speculative scheduler: every draft accepted or none, exact tokens, steps, gaps and KV blocks") {
  // Prompt 10, output 10, k = 3, blocks of 4 tokens.
  const auto run = [](double rate, std::vector<std::int64_t>& tokens, std::vector<std::int64_t>& held,
                      std::vector<std::int64_t>& kept, TokenGaps& gaps) {
    SchedulerConfig cfg{100, 4};
    cfg.kv_block_tokens = 4;
    Scheduler s(1, cfg, 100);
    const std::vector<double> rates(3, rate);
    const AcceptanceModel model = AcceptanceModel::from_rates(rates);
    s.set_speculation(model, core::Rng(3));
    std::vector<RequestState> reqs{req(0, 10, 10)};
    s.enqueue(0, 0, reqs);
    Batch b;
    Observer* obs[] = {&gaps};
    core::Time t = 0;
    while (s.form_batch(reqs, b)) {
      REQUIRE(b.entries.size() == 1);
      tokens.push_back(b.entries[0].tokens);
      if (!b.entries[0].prefill) {
        // The verify entry: its last token and drafts over its cached context.
        REQUIRE(b.entries[0].context == 10 + reqs[0].generated - 1);
        REQUIRE(b.decode_tokens == b.entries[0].tokens);
      }
      held.push_back(100 - s.kv(0).free_blocks());
      t += 10;
      s.complete(b, reqs, t, obs);
      kept.push_back(100 - s.kv(0).free_blocks());
    }
    REQUIRE(reqs[0].generated == 10);
    REQUIRE(s.kv(0).free_blocks() == 100);
  };
  SECTION("all accepted") {
    std::vector<std::int64_t> tokens, held, kept;
    TokenGaps gaps;
    run(1.0, tokens, held, kept, gaps);
    // Prefill emits token 1; verifies of 1 + 3 emit 4 (tokens 2-5, 6-9); the last verifies no draft.
    REQUIRE(tokens == std::vector<std::int64_t>{10, 4, 4, 1});
    // (The first token is on_first_token's.) A step's tokens: the gap, then 0 for those streamed with it.
    REQUIRE(gaps.gaps == std::vector<core::Time>{10, 0, 0, 0, 10, 0, 0, 0, 10});
    REQUIRE(gaps.verifies == 2);
    REQUIRE(gaps.accepted == 6);
    // Blocks of 4: prompt 10 -> 3; context 10 + 4 verify -> 4 (all kept: 14 tokens cached); context 14
    // + 4 -> 5 (kept: 18); the last step finishes and frees all.
    REQUIRE(held == std::vector<std::int64_t>{3, 4, 5, 5});
    REQUIRE(kept == std::vector<std::int64_t>{3, 4, 5, 0});
  }
  SECTION("none accepted") {
    std::vector<std::int64_t> tokens, held, kept;
    TokenGaps gaps;
    run(0.0, tokens, held, kept, gaps);
    // One token a step; the drafts shrink as the output runs out (3 left: 2 drafts, ...).
    REQUIRE(tokens == std::vector<std::int64_t>{10, 4, 4, 4, 4, 4, 4, 3, 2, 1});
    REQUIRE(gaps.gaps == std::vector<core::Time>(9, 10));
    REQUIRE(gaps.verifies == 8);
    REQUIRE(gaps.accepted == 0);
    // Verifying with g tokens out: context 9 + g plus 4 tokens (g <= 6; then 3, 2, 1: 18 in all), 14 ..
    // 19 tokens; after: only the context and the verified token, 10 + g, are kept.
    REQUIRE(held == std::vector<std::int64_t>{3, 4, 4, 4, 5, 5, 5, 5, 5, 5});
    REQUIRE(kept == std::vector<std::int64_t>{3, 3, 3, 4, 4, 4, 4, 5, 5, 0});
  }
}

TEST_CASE("speculative decoding: verify tokens route through the experts, (k + 1) per decode") {
  EvenSource* source = nullptr;
  // Every draft accepted, k = 3: prompt 64, then verifies of 4 tokens (tokens 2-5, 6-9).
  Simulator sim(one_gpu(64, 9, draft_model_config({1.0, 1.0, 1.0}), source));
  Steps steps;
  sim.add_observer(&steps);
  const SimulationResult res = sim.run();
  REQUIRE(res.requests[0].generated == 9);
  REQUIRE(source->step_tokens == std::vector<std::int64_t>{64, 4, 4});
  REQUIRE(source->sampled == std::vector<std::int64_t>{64, 4, 4});
  REQUIRE(steps.steps.size() == 3);
  REQUIRE(steps.steps[1].decode_tokens == 4);
  REQUIRE(res.figure("speculative.mean_accepted_tokens") == Approx(3.0));
  REQUIRE(res.figure("speculative.acceptance_rate") == Approx(1.0));
  REQUIRE(res.figure("speculative.tokens_per_step") == Approx(4.0));
}

TEST_CASE("speculative decoding: the draft model's passes priced by hand") {
  EvenSource* source = nullptr;
  // k = 2, nothing accepted: the first verify drafts 2 tokens from context 64 (the prompt).
  Simulator sim(one_gpu(64, 5, draft_model_config({0.0, 0.0}), source));
  Steps steps;
  sim.add_observer(&steps);
  const SimulationResult res = sim.run();
  REQUIRE(steps.steps.size() == 5);
  REQUIRE(steps.steps[0].draft_ns == 0.0);  // the prefill step verifies nothing
  // Paper GPU: max(FLOPs / 100e3, bytes / 1000) + 1 us per kernel. Draft: 1 layer, hidden 1024, 8
  // heads of 128, FFN 2048, vocabulary 1000, BF16. One token; pass p attends over 64 + 1 + p keys.
  const double launch = 1000.0;
  const double embedding = 1024.0 * 2 * 2 / 1000.0 + launch;
  const double attn_params = 4.0 * 1024 * 1024;
  const double projections = std::max(2.0 * attn_params / 100e3, (attn_params * 2 + 2048.0 * 2) / 1000.0) + launch;
  const auto core = [&](double context) {
    const double pairs = context + 1.0;  // the query sees the context and itself
    // KV of context + 1 tokens (2 x 8 x 128 BF16 each) and query + output (2 x 8 x 128 BF16).
    return std::max(4.0 * 8 * 128 * pairs / 100e3, (pairs * 4096 + 2048.0 * 2) / 1000.0) + launch;
  };
  const double ffn_params = 3.0 * 1024 * 2048;
  const double ffn = std::max(2.0 * ffn_params / 100e3, (ffn_params * 2 + 2048.0 * 2) / 1000.0) + launch;
  const double lm_head = std::max(2.0 * 1024000 / 100e3, (1024000.0 * 2 + 2024.0 * 2) / 1000.0) + launch;
  const double pass0 = embedding + projections + core(65) + ffn + lm_head;
  const double pass1 = embedding + projections + core(66) + ffn + lm_head;
  REQUIRE(pass0 == Approx(1004.096 + 9392.704 + 1000.0 + (66 * 4096 + 4096) / 1000.0 + 13587.008 + 3052.048));
  CHECK(steps.steps[1].draft_ns == Approx(pass0 + pass1));
  // The draft time is part of the step.
  CHECK(steps.steps[1].duration_ns > steps.steps[1].draft_ns);
  // Later verifies draft fewer as the output runs out (2 left: 1 draft; 1 left: none).
  CHECK(steps.steps[3].draft_ns == Approx(embedding + projections + core(64 + 3) + ffn + lm_head));
  CHECK(steps.steps[4].draft_ns == 0.0);
  CHECK(res.figure("speculative.draft_time_share") > 0.0);
}

TEST_CASE("speculative decoding at low load: TPOT = step / E[A + 1]") {
  EvenSource* source = nullptr;
  const std::vector<double> rates{0.7, 0.5};  // E[A] = 0.7 + 0.35 = 1.05
  const std::int64_t output = 4001;
  Simulator sim(one_gpu(64, output, draft_model_config(rates), source));
  Steps steps;
  sim.add_observer(&steps);
  const SimulationResult res = sim.run();
  REQUIRE(res.requests[0].finished());
  double decode_ns = 0.0;
  double decode_steps = 0.0;
  for (const StepRecord& s : steps.steps) {
    if (s.prefill_tokens == 0) {
      decode_ns += static_cast<double>(s.end_ns - s.start_ns);
      decode_steps += 1.0;
    }
  }
  const double step_ms = decode_ns / decode_steps / 1e6;
  // About 1950 verifies; A + 1 has a standard deviation of 0.79, so the mean over them is within 2 %
  // at 3.6 sigma (the last steps, capped by the output, shift it by < 0.1 %).
  CHECK(res.requests[0].tpot_ms() == Approx(step_ms / (1.0 + 1.05)).epsilon(0.02));
  CHECK(res.figure("speculative.mean_accepted_tokens") == Approx(1.05).epsilon(0.02));
}

TEST_CASE("speculative decoding: the same seed gives the same tokens, another seed other draws") {
  const auto finish = [](std::uint64_t seed) {
    EvenSource* source = nullptr;
    SimulationParts p = one_gpu(64, 400, draft_model_config({0.7, 0.5}), source);
    p.seed = seed;
    Simulator sim(std::move(p));
    const SimulationResult res = sim.run();
    return std::pair{res.requests[0].finish_ns, res.figure("speculative.verifies")};
  };
  REQUIRE(finish(7) == finish(7));
  REQUIRE(finish(7).second != finish(8).second);
}
