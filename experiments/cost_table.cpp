#include "experiments/cost_table.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "hardware/roofline.hpp"
#include "models/layer_work.hpp"

namespace epsim::experiments {
namespace {

struct Cell {
  double us;
  const char* bound;
};

// What the cost model charges (RooflineCostModel::kernel_ns) and the roofline bound behind it.
Cell price(const hardware::RooflineCostModel& cost, int gpu, const hardware::KernelWork& w) {
  const auto c = hardware::roofline_cost(cost.gpu_of(gpu), w, cost.effective_speed(gpu, w));
  return {c.total_ns / 1e3, c.bound == hardware::Bound::compute ? "compute" : "memory"};
}

}  // namespace

std::string cost_table(const models::ModelSpec& m, const hardware::RooflineCostModel& cost, int gpu_index,
                       const CostTableOptions& o) {
  const hardware::GpuSpec& gpu = cost.gpu_of(gpu_index);
  const auto price_on = [&](const hardware::KernelWork& w) { return price(cost, gpu_index, w); };
  const std::int64_t local = o.local_experts > 0 ? o.local_experts : std::max<std::int64_t>(1, m.routed_experts / 8);
  std::string out;
  if (o.csv) {
    out =
        "tokens,experts_active,expert_ffn_us,expert_ffn_bound,attention_prefill_us,attention_prefill_bound,"
        "attention_decode_us,attention_decode_bound,projections_us,projections_bound\n";
  } else {
    out = fmt::format(
        "{} on {} (speed {}), one layer; experts: tokens spread evenly over the active experts of {} local,"
        " tile rule {}/{}; decode context {}\n",
        m.name, gpu.name, cost.speed(gpu_index), local, gpu.moe_tile_small, gpu.moe_tile_large, o.context);
    out += fmt::format("{:>8} {:>7} | {:>22} | {:>22} | {:>22} | {:>22}\n", "tokens", "active", "expert FFN us",
                       "prefill attention us", "decode attention us", "QKV+O projections us");
  }
  for (const std::int64_t n : o.tokens) {
    const std::int64_t active = std::max<std::int64_t>(1, o.experts_active > 0 ? o.experts_active : std::min(n, local));
    // n tokens over `active` experts, as evenly as possible, each padded to the tile.
    const std::int64_t tile = cost.moe_tile(gpu_index, n, local);
    std::int64_t padded = 0;
    for (std::int64_t e = 0; e < active; ++e) {
      padded += hardware::pad_to_tile(n / active + (e < n % active ? 1 : 0), tile);
    }
    const auto nd = static_cast<double>(n);
    const Cell expert =
        price_on(models::expert_ffn_work(m, static_cast<double>(padded), nd, static_cast<double>(active)));
    const Cell prefill = price_on(
        models::attention_core_work(m, {nd, models::causal_pairs(0.0, nd), 0.0}, hardware::OpKind::attention_prefill));
    const auto ctx = static_cast<double>(o.context);
    const Cell decode =
        price_on(models::attention_core_work(m, {nd, nd * (ctx + 1.0), nd * ctx}, hardware::OpKind::attention_decode));
    const Cell proj = price_on(models::attention_projection_work(m, nd));
    if (o.csv) {
      out += fmt::format("{},{},{},{},{},{},{},{},{},{}\n", n, active, expert.us, expert.bound, prefill.us,
                         prefill.bound, decode.us, decode.bound, proj.us, proj.bound);
    } else {
      out += fmt::format("{:>8} {:>7} | {:>12.2f} {:>9} | {:>12.2f} {:>9} | {:>12.2f} {:>9} | {:>12.2f} {:>9}\n", n,
                         active, expert.us, expert.bound, prefill.us, prefill.bound, decode.us, decode.bound, proj.us,
                         proj.bound);
    }
  }
  return out;
}

}  // namespace epsim::experiments
