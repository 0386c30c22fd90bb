#include "hardware/roofline.hpp"

#include <algorithm>

#include "sim/core/error.hpp"

namespace epsim::hardware {

double achievable_flop_per_ns(const GpuSpec& gpu, core::Precision p) {
  const double tflops = (p == core::Precision::fp8 && gpu.fp8_tflops > 0.0) ? gpu.fp8_tflops : gpu.bf16_tflops;
  return tflops * 1e3 * gpu.compute_efficiency;  // 1 TFLOP/s = 1e12 / 1e9 = 1e3 FLOP per ns
}

double achievable_bytes_per_ns(const GpuSpec& gpu) {
  return gpu.hbm_gbps * gpu.memory_efficiency;  // 1 GB/s = 1 byte per ns
}

KernelCost roofline_cost(const GpuSpec& gpu, const core::KernelWork& work, double speed) {
  KernelCost c;
  c.compute_ns = work.flops / achievable_flop_per_ns(gpu, work.precision);
  c.memory_ns = work.bytes / achievable_bytes_per_ns(gpu);
  c.bound = c.compute_ns >= c.memory_ns ? Bound::compute : Bound::memory;
  c.total_ns = std::max(c.compute_ns, c.memory_ns) / speed + gpu.kernel_launch_us * 1e3;
  return c;
}

RooflineCostModel::RooflineCostModel(GpuSpec gpu, std::vector<double> speed_factors)
    : gpu_(std::move(gpu)), speed_(std::move(speed_factors)) {
  if (speed_.empty()) {
    throw core::Error("RooflineCostModel: no GPUs");
  }
  for (const double s : speed_) {
    if (!(s > 0.0)) {
      throw core::Error("RooflineCostModel: speed factors must be > 0");
    }
  }
}

double RooflineCostModel::kernel_ns(int gpu, const core::KernelWork& work) const {
  return roofline_cost(gpu_, work, speed_[static_cast<std::size_t>(gpu)]).total_ns;
}

std::int64_t RooflineCostModel::padded_expert_tokens(int /*gpu*/, std::int64_t tokens) const {
  const std::int64_t tile = gpu_.moe_tile_tokens;
  return (tokens + tile - 1) / tile * tile;
}

}  // namespace epsim::hardware
