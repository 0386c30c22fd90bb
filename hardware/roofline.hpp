#pragma once
// Roofline kernel cost: time = max(flops / achievable_flops, bytes / achievable_bw) / speed + launch.
// `speed` is the GPU's variability factor (1 = nominal; 0.88 = 12 % slow): it stretches the kernel
// body, not the fixed launch overhead, which is mostly host-side.
#include <vector>

#include "hardware/cost_model.hpp"
#include "hardware/gpu_spec.hpp"

namespace epsim::hardware {

enum class Bound : std::uint8_t { compute, memory };

struct KernelCost {
  double compute_ns = 0.0;  ///< flops / achievable FLOP/s (before the speed factor)
  double memory_ns = 0.0;   ///< bytes / achievable bandwidth (before the speed factor)
  double total_ns = 0.0;    ///< max of the two / speed + launch overhead
  Bound bound = Bound::memory;
};

/// Achievable FLOP/s (in FLOP per ns) of `gpu` for a precision: FP8 falls back to BF16 when absent.
double achievable_flop_per_ns(const GpuSpec& gpu, core::Precision p);
/// Achievable HBM bytes per ns.
double achievable_bytes_per_ns(const GpuSpec& gpu);
/// The roofline of one kernel on `gpu` running at `speed` times nominal speed.
KernelCost roofline_cost(const GpuSpec& gpu, const core::KernelWork& work, double speed = 1.0);

/// Cost model of a cluster of identical GPU models that differ only by a constant speed factor each.
class RooflineCostModel final : public CostModel {
 public:
  RooflineCostModel(GpuSpec gpu, std::vector<double> speed_factors);
  int num_gpus() const override { return static_cast<int>(speed_.size()); }
  double kernel_ns(int gpu, const core::KernelWork& work) const override;
  std::int64_t padded_expert_tokens(int gpu, std::int64_t tokens) const override;
  const GpuSpec& gpu() const { return gpu_; }
  double speed(int gpu) const { return speed_[static_cast<std::size_t>(gpu)]; }

 private:
  GpuSpec gpu_;
  std::vector<double> speed_;
};

}  // namespace epsim::hardware
