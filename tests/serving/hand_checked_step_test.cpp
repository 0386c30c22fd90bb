// A 2-GPU, 1-layer, 1-request scenario small enough to price on paper: its TTFT must equal the sum of
// the modelled phases, each computed here from first principles (not through models/ or hardware/).
#include <catch2/catch.hpp>

#include "hardware/roofline.hpp"
#include "policies/even_routing.hpp"
#include "policies/linear_placement.hpp"
#include "sim/serving/simulator.hpp"
#include "tests/support/tiny_model.hpp"

using namespace epsim;

namespace {

// Always routes the same counts: experts 0..3 get 40, 30, 50, 8 token-expert pairs (64 tokens x top-2).
class FixedRouting final : public workloads::RoutingSource {
 public:
  int num_moe_layers() const override { return 1; }
  int num_experts() const override { return 4; }
  int top_k() const override { return 2; }
  void sample(int, std::int64_t tokens, std::span<std::int32_t> out) override {
    REQUIRE(tokens == 64);
    const std::int32_t counts[] = {40, 30, 50, 8};
    std::copy(std::begin(counts), std::end(counts), out.begin());
  }
};

}  // namespace

TEST_CASE("hand-checked scenario: TTFT equals the sum of the modelled phases") {
  const models::ModelSpec m = test::tiny_model(2);

  hardware::GpuSpec g = test::paper_gpu();
  g.moe_tile_small = 16;
  g.moe_tile_large = 16;

  serving::SimulationParts p{
      .model = m,
      .cost = std::make_unique<hardware::RooflineCostModel>(g, std::vector<double>{1.0, 0.5}),
      .topology = hardware::Topology(1, 2, hardware::LinkSpec{100.0, 2.0}, hardware::LinkSpec{10.0, 5.0}),
      .network = nullptr,  // port model: 2 us + bytes / 100 GB/s
      .collectives = {.model = hardware::CollectiveModelKind::ports},
      .placement = policies::LinearPlacement().place(policies::PlacementInput::shape(1, 4, 2, 1, 2, 1)),
      .make_routing = [] { return std::make_unique<policies::EvenRouting>(); },
      .routing_source = std::make_unique<FixedRouting>(),
      .workload = {},
      .serving = {},
      .seed = 1,
  };
  p.workload.arrivals.rate_rps = 1.0;
  p.workload.num_requests = 1;
  p.workload.prompt.value = 64;
  p.workload.output.value = 1;
  p.serving.ep_size = 2;
  p.serving.step_overhead_us = 10.0;

  serving::Simulator sim(std::move(p));
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
