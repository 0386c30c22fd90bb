// SPDX-License-Identifier: Apache-2.0
#include "experiments/cli/cost_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "calibration/measured_work.hpp"
#include "hardware/roofline.hpp"
#include "models/layer_work.hpp"

namespace epsim::experiments {
namespace {

struct Cell {
  double us;
  const char* bound;
};

struct ExpertShape {
  double active;
  double padded;
};

// The experts' share of n tokens: exact for an explicit count, the expectation otherwise (header).
ExpertShape expert_shape(std::int64_t n, std::int64_t explicit_active, std::int64_t local, std::int64_t tile) {
  if (explicit_active > 0) {
    std::int64_t padded = 0;
    for (std::int64_t e = 0; e < explicit_active; ++e) {
      padded += hardware::pad_to_tile(n / explicit_active + (e < n % explicit_active ? 1 : 0), tile);
    }
    return {static_cast<double>(explicit_active), static_cast<double>(padded)};
  }
  const double active = std::max(1.0, expected_active_local(local, n));
  const auto share = static_cast<std::int64_t>(std::ceil(static_cast<double>(n) / active));
  return {active, active * static_cast<double>(hardware::pad_to_tile(share, tile))};
}

}  // namespace

double expected_active_local(std::int64_t local, std::int64_t pairs) {
  return calibration::expected_active_experts(static_cast<double>(local), 1.0, static_cast<double>(pairs));
}

std::string cost_table(const models::ModelSpec& m, const hardware::CostModel& cost, const hardware::GpuSpec& gpu,
                       int gpu_index, double speed, const CostTableOptions& o) {
  // What the run's cost model charges; the bound is the GPU's roofline's (the model may be no roofline).
  const auto price_on = [&](const hardware::KernelWork& w) {
    const bool compute = hardware::roofline_cost(gpu, w).bound == hardware::Bound::compute;
    return Cell{cost.kernel_ns(gpu_index, w) / 1e3, compute ? "compute" : "memory"};
  };
  const std::int64_t local = o.local_experts > 0 ? o.local_experts : std::max<std::int64_t>(1, m.routed_experts / 8);
  std::string out;
  if (o.csv) {
    out =
        "tokens,experts_active,expert_ffn_us,expert_ffn_bound,attention_prefill_us,attention_prefill_bound,"
        "attention_decode_us,attention_decode_bound,projections_us,projections_bound,shared_router_us,"
        "shared_router_bound,elementwise_us\n";
  } else {
    const std::string active = o.experts_active > 0
                                   ? fmt::format("{} given active experts split them exactly", o.experts_active)
                                   : std::string("the expected active experts get tokens / active each (rounded up)");
    out = fmt::format(
        "{} on {} (speed {}), one layer; experts: tokens land uniformly on {} local, {}, padded to the tile rule "
        "{}/{}; decode context {}; elementwise kernels of a MoE layer {} the permutation\n",
        m.name, gpu.name, speed, local, active, gpu.moe_tile_small, gpu.moe_tile_large, o.context,
        o.masked_layout ? "without" : "with");
    out += fmt::format("{:>8} {:>7} | {:>22} | {:>22} | {:>22} | {:>22} | {:>22} | {:>14}\n", "tokens", "active",
                       "expert FFN us", "prefill attention us", "decode attention us", "QKV+O projections us",
                       "shared+router us", "elementwise us");
  }
  for (const std::int64_t n : o.tokens) {
    const ExpertShape e = expert_shape(n, o.experts_active, local, cost.moe_tile(gpu_index, n, local));
    const auto nd = static_cast<double>(n);
    const Cell expert = price_on(models::expert_ffn_work(m, e.padded, nd, e.active));
    const auto ctx = static_cast<double>(o.context);
    const models::AttentionBatch prefill_all{nd, models::causal_pairs(0.0, nd), 0.0};
    const models::AttentionBatch decode_all{nd, nd * (ctx + 1.0), nd * ctx};
    Cell prefill = price_on(models::attention_core_work(m, prefill_all, hardware::OpKind::attention_prefill));
    Cell decode = price_on(models::attention_core_work(m, decode_all, hardware::OpKind::attention_decode));
    if (m.sparse_attention()) {
      // A full layer of DeepSeek Sparse Attention: the indexer over every pair, attention over the selected.
      const double topk = static_cast<double>(m.index_topk);
      const Cell prefill_core = price_on(models::attention_core_work(
          m, {nd, models::capped_causal_pairs(0, n, m.index_topk), 0.0}, hardware::OpKind::attention_prefill));
      const Cell decode_core = price_on(models::attention_core_work(
          m, {nd, nd * std::min(ctx + 1.0, topk), nd * std::min(ctx, topk)}, hardware::OpKind::attention_decode));
      prefill = Cell{prefill_core.us + price_on(models::indexer_work(m, prefill_all)).us, prefill_core.bound};
      decode = Cell{decode_core.us + price_on(models::indexer_work(m, decode_all)).us, decode_core.bound};
    }
    const Cell proj = price_on(models::attention_projection_work(m, nd));
    const bool has_shared = m.shared_width() > 0.0;
    const Cell shared = has_shared ? price_on(models::shared_expert_work(m, nd)) : Cell{0.0, "-"};
    const Cell router = price_on(models::router_work(m, nd));
    const Cell shared_router{shared.us + router.us, has_shared ? shared.bound : router.bound};
    const double elementwise = cost.kernel_ns(gpu_index, models::elementwise_work(m, nd, true, !o.masked_layout)) / 1e3;
    if (o.csv) {
      out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{}\n", n, e.active, expert.us, expert.bound, prefill.us,
                         prefill.bound, decode.us, decode.bound, proj.us, proj.bound, shared_router.us,
                         shared_router.bound, elementwise);
    } else {
      out += fmt::format(
          "{:>8} {:>7.1f} | {:>12.2f} {:>9} | {:>12.2f} {:>9} | {:>12.2f} {:>9} | {:>12.2f} {:>9} | {:>12.2f} {:>9} | "
          "{:>14.2f}\n",
          n, e.active, expert.us, expert.bound, prefill.us, prefill.bound, decode.us, decode.bound, proj.us, proj.bound,
          shared_router.us, shared_router.bound, elementwise);
    }
  }
  return out;
}

}  // namespace epsim::experiments
