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

Cell price(const hardware::GpuSpec& gpu, const core::KernelWork& w, double speed) {
  const auto c = hardware::roofline_cost(gpu, w, speed);
  return {c.total_ns / 1e3, c.bound == hardware::Bound::compute ? "compute" : "memory"};
}

}  // namespace

std::string cost_table(const models::ModelSpec& m, const hardware::GpuSpec& gpu, const CostTableOptions& o) {
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
        m.name, gpu.name, o.speed, local, gpu.moe_tile_small, gpu.moe_tile_large, o.context);
    out += fmt::format("{:>8} {:>7} | {:>22} | {:>22} | {:>22} | {:>22}\n", "tokens", "active", "expert FFN us",
                       "prefill attention us", "decode attention us", "QKV+O projections us");
  }
  for (const std::int64_t n : o.tokens) {
    const std::int64_t active = std::max<std::int64_t>(1, o.experts_active > 0 ? o.experts_active : std::min(n, local));
    // n tokens over `active` experts, as evenly as possible, each padded to the tile.
    const std::int64_t tile = gpu.moe_tile(n, local);
    std::int64_t padded = 0;
    for (std::int64_t e = 0; e < active; ++e) {
      padded += hardware::pad_to_tile(n / active + (e < n % active ? 1 : 0), tile);
    }
    const auto nd = static_cast<double>(n);
    const Cell expert =
        price(gpu, models::expert_ffn_work(m, static_cast<double>(padded), nd, static_cast<double>(active)), o.speed);
    const Cell prefill = price(
        gpu, models::attention_core_work(m, {nd, models::causal_pairs(0.0, nd), 0.0}, core::OpKind::attention_prefill),
        o.speed);
    const auto ctx = static_cast<double>(o.context);
    const Cell decode = price(
        gpu, models::attention_core_work(m, {nd, nd * (ctx + 1.0), nd * ctx}, core::OpKind::attention_decode), o.speed);
    const Cell proj = price(gpu, models::attention_projection_work(m, nd), o.speed);
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
