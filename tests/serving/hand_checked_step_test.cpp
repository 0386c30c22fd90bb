// SPDX-License-Identifier: Apache-2.0
// A 2-GPU, 1-layer, 1-request scenario small enough to price on paper: its TTFT must equal the sum of
// the modelled phases, each computed here from first principles (not through models/ or hardware/).
#include <catch2/catch.hpp>

#include <algorithm>

#include "hardware/roofline.hpp"
#include "policies/even_routing.hpp"
#include "policies/linear_placement.hpp"
#include "sim/simulator.hpp"
#include "tests/support/tiny_model.hpp"

using namespace epsim;

namespace {

// Always routes the same counts: experts 0..3 get 40, 30, 50, 8 token-expert pairs (64 tokens x top-2),
// half of each for a half of the prompt.
class FixedRouting final : public workloads::RoutingSource {
 public:
  int num_moe_layers() const override { return 1; }
  int num_experts() const override { return 4; }
  int top_k() const override { return 2; }
  void sample(int, std::int64_t tokens, std::span<std::int32_t> out) override {
    REQUIRE((tokens == 64 || tokens == 32));  // the prompt, or one half of it under two-batch overlap
    const std::int32_t counts[] = {40, 30, 50, 8};
    std::transform(std::begin(counts), std::end(counts), out.begin(),
                   [&](std::int32_t c) { return static_cast<std::int32_t>(c * tokens / 64); });
  }
};

serving::SimulationParts scenario(const models::ModelSpec& m) {
  hardware::GpuSpec g = test::paper_gpu();
  g.moe_tile_small = 16;
  g.moe_tile_large = 16;

  serving::SimulationParts p{
      .model = m,
      .cost = std::make_unique<hardware::RooflineCostModel>(g, std::vector<double>{1.0, 0.5}),
      .topology = hardware::Topology(1, 2, hardware::LinkSpec{100.0, 2.0}, hardware::LinkSpec{10.0, 5.0}),
      .network = nullptr,  // port model: 2 us + bytes / 100 GB/s
      .collectives = {.model = hardware::CollectiveModelKind::ports},
      .routing_source = std::make_unique<FixedRouting>(),
      .workload = {},
      .serving = {},
      .seed = 1,
  };
  p.workload.arrivals.rate_rps = 1.0;
  p.workload.num_requests = 1;
  p.workload.prompt.value = 64;
  p.workload.output.value = 1;
  p.pools.push_back(serving::colocated_pool(
      2, 2, policies::LinearPlacement().place(policies::PlacementInput::shape(1, 4, 2, 1, 2, 1)),
      [] { return std::make_unique<policies::EvenRouting>(); }));
  p.serving.step_overhead_us = 10.0;
  return p;
}

}  // namespace

TEST_CASE("hand-checked scenario: TTFT equals the sum of the modelled phases") {
  const models::ModelSpec m = test::tiny_model(2);
  serving::Simulator sim(scenario(m));
  const auto res = sim.run();
  REQUIRE(res.requests.size() == 1);
  const auto& r = res.requests[0];
  REQUIRE(r.rank == 0);  // the only request lands on GPU 0; GPU 1 only hosts experts 2 and 3

  const double launch = 1000.0;
  // Attention on GPU 0 = projections (a GEMM over 4 * 1024 * 1024 BF16 params, activations in and out)
  // + the prefill core: 64 * 65 / 2 causal pairs at 4 * 8 * 128 FLOPs; KV written for 64 tokens
  // (2 * 8 * 128 * 2 bytes each) and query + output (2 * 8 * 128 BF16 elements per token). No decode kernel.
  const double attn_params = 4.0 * 1024 * 1024;
  const double projections =
      std::max(2.0 * 64 * attn_params / 100e3, (attn_params * 2 + 64.0 * 2 * 1024 * 2) / 1000.0) + launch;
  const double prefill_core = std::max(4.0 * 8 * 128 * 2080 / 100e3, (64.0 * 4096 + 64.0 * 2048 * 2) / 1000.0) + launch;
  const double attention = projections + prefill_core;
  REQUIRE(attention == Approx(9650.752 + 1524.288));
  // Router: 1024 x 4 gate; reads weights and 64 x (1024 + 4) activations.
  const double router = std::max(2.0 * 64 * 4096 / 100e3, (4096.0 * 2 + 64.0 * 1028 * 2) / 1000.0) + launch;
  REQUIRE(router == Approx(1139.776));
  // Dispatch: GPU 0 holds experts 0, 1 (70 pairs), GPU 1 experts 2, 3 (58 pairs); all tokens start on
  // GPU 0, so 58 pairs x 1024 x 2 bytes cross NVLink at 100 bytes/ns, after 2 us latency.
  const double dispatch = 2000.0 + 58.0 * 2048 / 100.0;
  // Experts: padded tokens 48 + 32 = 80 on GPU 0 and 64 + 16 = 80 on GPU 1; weights of 2 experts each.
  const double expert_w = 2.0 * 3 * 1024 * 512 * 2;
  const double flops80 = 2.0 * 80 * 3 * 1024 * 512;
  const double gpu0 = std::max(flops80 / 100e3, (expert_w + 70.0 * 4096) / 1000.0) + launch;
  const double gpu1 = std::max(flops80 / 100e3, (expert_w + 58.0 * 4096) / 1000.0) / 0.5 + launch;  // half speed
  REQUIRE(gpu1 > gpu0);
  // LM head for the one token that completes the prompt: 1024 x 1000.
  const double lm_head = std::max(2.0 * 1024000 / 100e3, (1024000.0 * 2 + (1024.0 + 1000) * 2) / 1000.0) + launch;
  // Embedding lookup before the first layer: 64 rows of 1024 BF16 read and written, memory-bound.
  const double embedding = 64.0 * 1024 * 2 * 2 / 1000.0 + launch;
  const double step = embedding + attention + router + dispatch + gpu1 + dispatch + lm_head + 10000.0;
  REQUIRE(step == Approx(45800.592 + 1262.144));

  REQUIRE(r.first_token_ns - r.spec.arrival_ns == core::round_ns(step));
  REQUIRE(r.finish_ns == r.first_token_ns);
  // The straggler gap of the one MoE layer is the slow GPU's expert time minus the fast one's.
  REQUIRE(res.summary.mean_straggler_gap_us == Approx((gpu1 - gpu0) / 1e3));
}

TEST_CASE("hand-checked scenario: the elementwise kernels add their traffic and launches to the local phase") {
  models::ModelSpec m = test::tiny_model(2);
  serving::Simulator plain(scenario(m));
  m.elementwise_kernels = true;
  serving::Simulator with(scenario(m));
  const auto a = plain.run();
  const auto b = with.run();
  REQUIRE(a.requests.size() == 1);
  REQUIRE(b.requests.size() == 1);
  // GPU 0 holds all 64 tokens (GPU 1 none, so it launches nothing). Per token, BF16 elements read and
  // written: 2 norms with residual (8 x 1024), RoPE of 8 + 8 heads of 128 (2 x 16 x 128), SiLU of 2
  // experts (2 x 3 x 512), weighted sum of 2 outputs into 1 (3 x 1024); bytes: router logits (2 x 4 x 4
  // FP32) and the contiguous layout's permutation (2 copies in and out, 2 x 2 x 1024 x (2 + 2)).
  const double per_token = (8.0 * 1024 + 2 * 16 * 128 + 2 * 3 * 512 + 3 * 1024) * 2 + 32 + 2.0 * 2 * 1024 * 4;
  REQUIRE(per_token == 53280.0);
  // 1000 bytes per ns; 8 kernels (2 norms, RoPE, top-k, SiLU, sum, 2 permutations) at 1 us each.
  const double elementwise = 64.0 * per_token / 1000.0 + 8 * 1000.0;
  const auto ttft = [](const serving::SimulationResult& r) {
    return static_cast<double>(r.requests[0].first_token_ns - r.requests[0].spec.arrival_ns);
  };
  CHECK(ttft(b) - ttft(a) == Approx(elementwise).margin(1.0));
}

TEST_CASE("two-batch overlap: DeepEP low-latency kernels hold the compute stream before the experts and the tails") {
  const models::ModelSpec m = test::tiny_model(2);
  const auto ttft = [&](double dispatch_us, double combine_us) {
    serving::SimulationParts p = scenario(m);
    p.pools[0].spec.comm = hardware::algorithm_defaults(hardware::DispatchAlgorithm::deepep_low_latency);
    p.pools[0].spec.comm.overlap = hardware::OverlapMode::two_batch;
    p.pools[0].spec.comm.compute_dispatch_us = dispatch_us;
    p.pools[0].spec.comm.compute_combine_us = combine_us;
    serving::Simulator sim(std::move(p));
    const auto r = sim.run();
    REQUIRE(r.requests.size() == 1);
    return static_cast<double>(r.requests[0].first_token_ns - r.requests[0].spec.arrival_ns);
  };
  const double base = ttft(0.0, 0.0);
  REQUIRE(base < 1e6);
  // With kernels far longer than everything else the compute stream is the critical path: each half's
  // expert phase holds one dispatch's kernels (1 ms) and each half's tail its last combine's (2 ms), all
  // on the one stream: 2 x (1 + 2) ms, plus at most the step without them.
  const double slow = ttft(1000.0, 2000.0);
  CHECK(slow >= 6e6);
  CHECK(slow <= 6e6 + base);
}

TEST_CASE("two-batch overlap: DeepEP normal kernels take overlap_exchange_factor times their isolated time") {
  const models::ModelSpec m = test::tiny_model(2);
  const auto run = [&](hardware::OverlapMode overlap, double factor) {
    serving::SimulationParts p = scenario(m);
    p.pools[0].spec.comm = hardware::algorithm_defaults(hardware::DispatchAlgorithm::deepep_normal);
    p.pools[0].spec.comm.overlap = overlap;
    p.pools[0].spec.comm.overlap_exchange_factor = factor;
    serving::Simulator sim(std::move(p));
    const auto r = sim.run();
    REQUIRE(r.requests.size() == 1);
    return std::pair{static_cast<double>(r.requests[0].first_token_ns - r.requests[0].spec.arrival_ns),
                     r.summary.mean_comm_ms * 1e6};
  };
  const auto [ttft_1, comm_1] = run(hardware::OverlapMode::two_batch, 1.0);
  REQUIRE(comm_1 > 0.0);
  const auto [ttft_1000, comm_1000] = run(hardware::OverlapMode::two_batch, 1000.0);
  const auto [ttft_2000, comm_2000] = run(hardware::OverlapMode::two_batch, 2000.0);
  CHECK(comm_1000 == Approx(1000.0 * comm_1));
  CHECK(comm_2000 == Approx(2000.0 * comm_1));
  // Once the exchanges dominate, the communication stream carries the step from the first half's local
  // work to the last half's tail: every further unit of the factor adds the isolated exchanges once.
  CHECK(ttft_2000 - ttft_1000 == Approx(1000.0 * comm_1).margin(2.0));  // times are whole ns
  CHECK(ttft_1000 > ttft_1);
  // Without overlap nothing computes beside the kernels: the factor does not apply.
  CHECK(run(hardware::OverlapMode::none, 1000.0) == run(hardware::OverlapMode::none, 1.0));
}

TEST_CASE("hand-checked scenario: a sliding or a linear layer replaces a full attention layer's cost") {
  // Two layers: a dense one, then the MoE layer. Only layer 0's attention kind differs between the runs,
  // so the TTFTs differ by that layer's attention on GPU 0 (GPU 1 has no tokens). A GPU of 1 TFLOP/s
  // makes the 64-token attention compute-bound.
  const auto ttft = [](const std::vector<models::LayerAttention>& kinds) {
    models::ModelSpec m = test::tiny_model(2);
    m.num_layers = 2;
    m.first_dense_layers = 1;
    m.dense_intermediate_size = 512;
    m.layer_types = kinds;
    m.sliding_window = 16;
    m.linear_num_key_heads = 2;
    m.linear_num_value_heads = 4;
    m.linear_key_head_dim = 64;
    m.linear_value_head_dim = 64;
    m.linear_conv_kernel_dim = 4;
    serving::SimulationParts p = scenario(m);
    hardware::GpuSpec g = test::paper_gpu();
    g.bf16_tflops = 1.0;
    g.moe_tile_small = 16;
    g.moe_tile_large = 16;
    p.cost = std::make_unique<hardware::RooflineCostModel>(g, std::vector<double>{1.0, 0.5});
    serving::Simulator sim(std::move(p));
    const auto r = sim.run();
    REQUIRE(r.requests.size() == 1);
    return static_cast<double>(r.requests[0].first_token_ns - r.requests[0].spec.arrival_ns);
  };
  using K = models::LayerAttention;
  const double full = ttft({K::full, K::full});
  // Full prefill core: 64 x 65 / 2 = 2080 pairs x 4 x 8 x 128 FLOPs at 1e3 FLOP/ns; sliding (window 16):
  // 1 + ... + 15 + 49 x 16 = 904 pairs. Same bytes (64 keys written, none read), same launch.
  CHECK(full - ttft({K::sliding, K::full}) == Approx((2080.0 - 904.0) * 4096 / 1e3).margin(1.0));
  // Linear layer instead: projections 1024 x (2 x 2 x 64 + 2 x 4 x 64) + ba 1024 x 8 + conv 512 x 4
  // + out 256 x 1024 = 1,058,816 params against 4 x 1024 x 1024; the chunked Gated DeltaNet per token and
  // value head 2 x 64 x 128 + 5 x 64^2 + 2 x 64 x 192 + 2 x 64^2 = 69,632 FLOPs, x 4 heads, + the conv's
  // 2 x 4 x 512, for 64 tokens. All compute-bound at 1e3 FLOP/ns; the launches cancel (two kernels each).
  const double full_attention = 2.0 * 64 * 4194304 / 1e3 + 2080.0 * 4096 / 1e3;
  const double linear_attention = 2.0 * 64 * 1058816 / 1e3 + 64.0 * (4 * 69632.0 + 4096) / 1e3;
  CHECK(full - ttft({K::linear, K::full}) == Approx(full_attention - linear_attention).margin(1.0));
}
