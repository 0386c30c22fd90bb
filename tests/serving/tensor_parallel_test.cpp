// SPDX-License-Identifier: Apache-2.0
// Tensor-parallel attention ranks: both GPUs of a rank do half the attention and pay a ring all-reduce;
// the memory plan splits GQA KV caches and shardable weights.
#include <catch2/catch.hpp>

#include "core/params.hpp"
#include "hardware/roofline.hpp"
#include "models/layer_work.hpp"
#include "policies/even_routing.hpp"
#include "policies/linear_placement.hpp"
#include "sim/memory_plan.hpp"
#include "sim/simulator.hpp"
#include "tests/support/tiny_model.hpp"
#include "workloads/synthetic_router.hpp"

using namespace epsim;

namespace {

struct Capture final : serving::Observer {
  std::vector<double> local;
  void on_layer(const serving::LayerRecord& l) override {
    if (local.empty()) {
      local.assign(l.gpu_local_ns.begin(), l.gpu_local_ns.end());
    }
  }
};

models::ModelSpec tiny() {
  return test::tiny_model(1);
}
hardware::GpuSpec gpu() {
  return test::paper_gpu();
}

std::vector<double> first_layer_local(int tp) {
  serving::SimulationParts p{
      .model = tiny(),
      .cost = std::make_unique<hardware::RooflineCostModel>(gpu(), std::vector<double>{1.0, 1.0}),
      .topology = hardware::Topology(1, 2, hardware::LinkSpec{100.0, 2.0}, hardware::LinkSpec{10.0, 5.0}),
      .network = nullptr,
      .collectives = {.model = hardware::CollectiveModelKind::ports},
      .routing_source = std::make_unique<workloads::SyntheticRouter>(workloads::SyntheticRouterConfig{}, 1, 4, 1,
                                                                     core::RandomStreams(1)),
      .workload = {},
      .serving = {},
      .seed = 1,
  };
  p.workload.num_requests = 1;
  p.workload.prompt.value = 2048;
  p.workload.output.value = 1;
  p.pools.push_back(serving::colocated_pool(
      2, 2, policies::LinearPlacement().place(policies::PlacementInput::shape(1, 4, 2, 1, 2, 1)),
      [] { return std::make_unique<policies::EvenRouting>(); }, tp));
  serving::Simulator sim(std::move(p));
  Capture c;
  sim.add_observer(&c);
  sim.run();
  return c.local;
}

}  // namespace

TEST_CASE("TP attention: both GPUs of the rank do half the attention, then NCCL's all-reduce") {
  const auto dp = first_layer_local(1);
  const auto tp = first_layer_local(2);
  REQUIRE(dp[1] == 0.0);  // DP: the lone request lives on GPU 0
  REQUIRE(tp[0] == Approx(tp[1]));
  // Recompute GPU 0's local phase with TP 2: embedding and router of 1024 tokens, attention projections
  // and prefill core of 2048 tokens with FLOPs and bytes halved, then the all-reduce of 2048 x 1024 BF16
  // over 2 GPUs as NCCL picks it (hardware/nccl_tuning.hpp): ring Simple, 2 us + NCCL's 8.4 + 2 steps x
  // 3.4 us + 2 (2 - 1) / 2 x 4 MiB / 100 B/ns (LL128: 14 + 2 x 1.9 us at 92 B/ns; LL: at 50 B/ns).
  const hardware::RooflineCostModel cost(gpu(), {1.0, 1.0});
  const auto m = tiny();
  const auto half = [](hardware::KernelWork w) {
    w.flops /= 2.0;
    w.bytes /= 2.0;
    return w;
  };
  models::AttentionBatch prefill{2048.0, models::causal_pairs(0.0, 2048.0), 0.0};
  const double expected =
      cost.kernel_ns(0, models::embedding_work(m, 1024.0)) +
      cost.kernel_ns(0, half(models::attention_projection_work(m, 2048.0))) +
      cost.kernel_ns(0, half(models::attention_core_work(m, prefill, hardware::OpKind::attention_prefill))) +
      (2000.0 + 15200.0 + 2048.0 * 1024.0 * 2.0 / 100.0) + cost.kernel_ns(0, models::router_work(m, 1024.0));
  REQUIRE(tp[0] == Approx(expected));
  REQUIRE(tp[0] < dp[0]);
}

TEST_CASE("the memory plan splits a GQA KV cache over TP GPUs, not an MLA one") {
  const auto load = [](const std::string& name) { return models::load_model_preset(name); };
  const auto h200 = hardware::load_gpu_preset("h200");
  serving::SchedulerConfig sched;
  const auto qwen = load("qwen3-30b-a3b");  // 4 KV heads
  const auto q1 = serving::plan_memory(qwen, h200, 16, sched, 1);
  const auto q2 = serving::plan_memory(qwen, h200, 16, sched, 2);
  REQUIRE(q2.weights_gib < q1.weights_gib);
  // Each rank of 2 GPUs stores half of each token's KV on each GPU: twice the tokens per GPU-worth.
  REQUIRE(static_cast<double>(q2.kv_blocks) / static_cast<double>(q1.kv_blocks) ==
          Approx(2.0 * q2.kv_gib / q1.kv_gib).epsilon(1e-3));
  const auto ds = load("deepseek-v3");  // MLA: the latent cache is whole on every GPU
  const auto d1 = serving::plan_memory(ds, h200, 5, sched, 1);
  const auto d2 = serving::plan_memory(ds, h200, 5, sched, 2);
  REQUIRE(static_cast<double>(d2.kv_blocks) / static_cast<double>(d1.kv_blocks) ==
          Approx(d2.kv_gib / d1.kv_gib).epsilon(1e-3));
  // Memory accounting by hand for one case: weights of DeepSeek-V3 with 5 expert slots per GPU, DP.
  const double expert = 3.0 * 7168 * 2048;  // FP8: one byte per weight
  const double non_expert = models::total_params(ds) - 58.0 * 256.0 * expert;
  REQUIRE(d1.weights_gib == Approx((non_expert + 5.0 * 58.0 * expert) / (1024.0 * 1024.0 * 1024.0)));
}
