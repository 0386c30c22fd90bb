// SPDX-License-Identifier: Apache-2.0
#pragma once
// Measured tables as the cost model: the roofline cost model (its speed factors, stress weighting, drift
// and jitter untouched) with, per kernel family, a measured correction (measured_curve.hpp) applied to
// the kernels of GPUs of the measured GPU model: a kernel costs its roofline time on its GPU times the
// table's measured / roofline ratio at the kernel's nominal roofline time. Families without a curve, and
// GPUs of another model (a disaggregated prefill pool's), keep the plain roofline.
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "hardware/measured_curve.hpp"
#include "hardware/roofline.hpp"

namespace epsim::hardware {

using KernelCurves = std::array<std::shared_ptr<const MeasuredCurve>, k_op_kinds>;

class MeasuredCostModel final : public CostModel {
 public:
  /// `measured_gpu`: the GpuSpec name of the GPUs the curves were measured on. The roofline's GPU models
  /// (set_gpu_model) must be final.
  MeasuredCostModel(std::unique_ptr<RooflineCostModel> roofline, KernelCurves curves, std::string measured_gpu);

  int num_gpus() const override { return roofline_->num_gpus(); }
  double kernel_ns(int gpu, const KernelWork& work) const override;
  MoeTileRule moe_tile_rule(int gpu) const override { return roofline_->moe_tile_rule(gpu); }
  void advance_to(core::Time now) override { roofline_->advance_to(now); }
  double jitter(int gpu) override { return roofline_->jitter(gpu); }
  bool has_jitter() const override { return roofline_->has_jitter(); }

  const RooflineCostModel& roofline() const { return *roofline_; }
  /// The correction of a kernel family on `gpu` (null: the plain roofline).
  const MeasuredCurve* curve(int gpu, OpKind kind) const;

 private:
  std::unique_ptr<RooflineCostModel> roofline_;
  KernelCurves curves_;
  std::string measured_gpu_;
  std::vector<std::uint8_t> measured_;  // per GPU: of the measured GPU model (fixed once built)
};

/// The roofline under a run's cost model (itself, or what a MeasuredCostModel corrects): its GPUs' specs
/// and speeds, for what prints them.
const RooflineCostModel& roofline_of(const CostModel& cost);

}  // namespace epsim::hardware
