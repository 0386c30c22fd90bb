// SPDX-License-Identifier: Apache-2.0
#pragma once
// Roofline kernel cost: time = max(flops / achievable_flops, bytes / achievable_bw, floor) / speed +
// launch (+ the family's fixed cost), with achievable rates = peak x the efficiency of the kernel's family
// at its precision; a family with a smooth knee blends the two bounds instead of taking the max
// (gpu_spec.hpp). The compute bound carries a GEMM's tile waves and attention's softmax per head dim. `speed` is the
// GPU's effective speed factor for this kernel (1 = nominal); it stretches the kernel body, not the fixed launch
// overhead, which is mostly host-side.
#include <array>
#include <optional>
#include <vector>

#include "core/random_streams.hpp"
#include "hardware/cost_model.hpp"
#include "hardware/gpu_spec.hpp"
#include "hardware/variability.hpp"

namespace epsim::hardware {

enum class Bound : std::uint8_t { compute, memory };

struct KernelCost {
  double compute_ns = 0.0;  ///< flops / achievable FLOP/s (before the speed factor)
  double memory_ns = 0.0;   ///< bytes / achievable bandwidth (before the speed factor)
  double total_ns = 0.0;    ///< max of the two (at least the floor) / speed + launch overhead
  Bound bound = Bound::memory;
};

/// Peak FLOP per ns of `gpu` for a precision: FP8 falls back to BF16 when the GPU has none.
double peak_flop_per_ns(const GpuSpec& gpu, hardware::Precision p);
/// Achievable FLOP per ns and bytes per ns for a kernel family.
double achievable_flop_per_ns(const GpuSpec& gpu, hardware::OpKind kind, hardware::Precision p);
double achievable_bytes_per_ns(const GpuSpec& gpu, hardware::OpKind kind, hardware::Precision p);
/// The kernel's arithmetic intensity (FLOP/byte) over the GPU's ridge point for its family: > 1 is
/// compute-bound, < 1 memory-bound.
double intensity_over_ridge(const GpuSpec& gpu, const hardware::KernelWork& work);
/// How much a GEMM of output m x n takes longer than its FLOPs at the achievable rate because its tiles
/// (gemm_tile_m x gemm_tile_n) run in waves over the SMs: (waves x SMs x tile area) / (m x n), the last
/// wave partly idle and the edge tiles padded. 1 without sm_count, or when the tiles fit in one wave
/// (libraries then pick smaller tiles or split K to fill the SMs).
double gemm_wave_factor(const GpuSpec& gpu, double m, double n);
/// Attention's compute time at head dim `head_dim` over its time without the softmax:
/// 1 + softmax_head_dim / head_dim (1 when either is 0).
double head_dim_factor(double softmax_head_dim, double head_dim);
/// The body of a kernel bound by both: the larger with a sharp knee (knee 0), else the p-norm
/// (compute^p + memory^p)^(1/p), which is at most 2^(1/p) times the larger, where both are equal.
double roofline_body_ns(double compute_ns, double memory_ns, double knee);
/// A family's rates at one precision on one GPU, resolved once: the step loop prices its kernels from
/// these without looking anything up.
struct KernelRates {
  double ns_per_flop = 0.0;  ///< 1 / (peak x compute efficiency)
  double ns_per_byte = 0.0;  ///< 1 / (bandwidth x memory efficiency)
  double knee = 0.0;
  double fixed_ns = 0.0;  ///< launch + the family's fixed cost, per kernel
  double floor_ns = 0.0;  ///< least body time, per kernel
  double softmax_head_dim = 0.0;
};
KernelRates kernel_rates(const GpuSpec& gpu, hardware::OpKind kind, hardware::Precision p);
/// The roofline of `work` on `gpu` from its rates, at `speed` times nominal speed.
KernelCost price_kernel(const GpuSpec& gpu, const KernelRates& r, const hardware::KernelWork& work, double speed);
/// The roofline of one kernel on `gpu` running at `speed` times nominal speed.
KernelCost roofline_cost(const GpuSpec& gpu, const hardware::KernelWork& work, double speed = 1.0);

/// Cost model of a cluster of one GPU model whose devices differ by a speed factor each, expressed per
/// kernel by stress (variability.hpp), optionally drifting over time and jittering per kernel.
class RooflineCostModel final : public CostModel {
 public:
  /// No stress dependence, drift or jitter: every kernel runs at exactly its GPU's factor.
  RooflineCostModel(GpuSpec gpu, std::vector<double> speed_factors);
  /// Full variability dynamics; drift and jitter draw from `streams` ("drift", "jitter", per GPU).
  RooflineCostModel(GpuSpec gpu, std::vector<double> speed_factors, const VariabilityConfig& dynamics,
                    const core::RandomStreams& streams);

  int num_gpus() const override { return static_cast<int>(base_speed_.size()); }
  double kernel_ns(int gpu, const hardware::KernelWork& work) const override;
  MoeTileRule moe_tile_rule(int gpu) const override { return gpu_of(gpu).moe_tile_rule(); }
  void advance_to(core::Time now) override;
  void begin_step(int first_gpu, int gpus, core::Time start) override;
  void end_step(int first_gpu, std::span<const double> busy_ns, core::Time start, core::Time end,
                double power_weight) override;
  /// The stress weight of `work` (variability.hpp): memory-bound kernels draw a fraction of full power.
  double power_weight(int gpu, const hardware::KernelWork& work) const override;
  bool power_limited() const override { return dvfs_.has_value(); }
  double power_clock(int gpu) const override { return dvfs_ ? dvfs_->clock(gpu) : 1.0; }
  double jitter(int gpu) override;
  bool has_jitter() const override { return jitter_sigma_ > 0.0; }
  /// One class per (GPU model, static speed factor); -1 for every GPU while speeds drift or follow DVFS.
  int price_class(int gpu) const override {
    return drift_.stddev > 0.0 || dvfs_ ? -1 : price_class_[static_cast<std::size_t>(gpu)];
  }

  const GpuSpec& gpu() const { return gpu_; }
  /// Gives GPUs [first, first + count) another GPU model (a disaggregated prefill pool of other GPUs).
  void set_gpu_model(int first, int count, const GpuSpec& spec);
  const GpuSpec& gpu_of(int gpu) const { return specs_[spec_of_[static_cast<std::size_t>(gpu)]]; }
  /// The GPU's speed factor now (static factor x drift x DVFS clock).
  double speed(int gpu) const { return speed_[static_cast<std::size_t>(gpu)]; }
  /// The power limiter (dvfs.hpp) when enabled.
  const DvfsLimiter* dvfs() const { return dvfs_ ? &*dvfs_ : nullptr; }
  /// The factor a kernel of this work actually runs at on `gpu` (stress-weighted).
  double effective_speed(int gpu, const hardware::KernelWork& work) const;
  /// The resolved rates of this work's family and precision on `gpu`'s GPU model.
  const KernelRates& rates(int gpu, const hardware::KernelWork& work) const {
    return rates_[spec_of_[static_cast<std::size_t>(gpu)]]
                 [static_cast<std::size_t>(work.kind) * k_precisions + static_cast<std::size_t>(work.precision)];
  }

 private:
  using SpecRates = std::array<KernelRates, static_cast<std::size_t>(k_op_kinds* k_precisions)>;
  static SpecRates rates_of(const GpuSpec& spec);
  double speed_for(int gpu, const KernelRates& r, const hardware::KernelWork& work) const;
  // speed_[g] from its static factor, drift and DVFS clock.
  void refresh_speed(std::size_t g);
  // Numbers the distinct (spec_of_, base_speed_) pairs, in GPU order.
  void classify();

  GpuSpec gpu_;
  std::vector<GpuSpec> specs_;        // GPU models in the cluster (specs_[0] = gpu_)
  std::vector<SpecRates> rates_;      // per specs_ entry: per (family, precision)
  std::vector<std::size_t> spec_of_;  // per GPU: index into specs_
  std::vector<double> base_speed_;
  std::vector<double> speed_;
  std::vector<int> price_class_;  // per GPU: its (GPU model, base speed) class
  StressConfig stress_;
  DriftConfig drift_;
  double jitter_sigma_ = 0.0;
  std::vector<double> drift_state_;  // relative deviation per GPU
  std::vector<core::Rng> drift_rng_;
  std::vector<core::Rng> jitter_rng_;
  std::optional<DvfsLimiter> dvfs_;
  core::Time now_ = 0;
};

}  // namespace epsim::hardware
