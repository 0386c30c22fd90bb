// SPDX-License-Identifier: Apache-2.0
#include "hardware/measured_cost_model.hpp"

namespace epsim::hardware {

MeasuredCostModel::MeasuredCostModel(std::unique_ptr<RooflineCostModel> roofline, KernelCurves curves,
                                     std::string measured_gpu)
    : roofline_(std::move(roofline)), curves_(std::move(curves)), measured_gpu_(std::move(measured_gpu)) {
  for (auto& c : curves_) {
    if (c && c->empty()) {
      c = nullptr;
    }
  }
  measured_.resize(static_cast<std::size_t>(roofline_->num_gpus()));
  for (int g = 0; g < roofline_->num_gpus(); ++g) {
    measured_[static_cast<std::size_t>(g)] = roofline_->gpu_of(g).name == measured_gpu_ ? 1 : 0;
  }
}

const MeasuredCurve* MeasuredCostModel::curve(int gpu, OpKind kind) const {
  return measured_[static_cast<std::size_t>(gpu)] != 0 ? curves_[static_cast<std::size_t>(kind)].get() : nullptr;
}

double MeasuredCostModel::kernel_ns(int gpu, const KernelWork& work) const {
  const MeasuredCurve* c = curve(gpu, work.kind);
  if (c == nullptr) {
    return roofline_->kernel_ns(gpu, work);
  }
  // The roofline at nominal speed keys the curve; the GPU's own speed stretches the body as it would.
  const KernelRates& r = roofline_->rates(gpu, work);
  const KernelCost nominal = price_kernel(roofline_->gpu_of(gpu), r, work, 1.0);
  const double fixed_ns = work.launches * r.fixed_ns;
  const double ns = (nominal.total_ns - fixed_ns) / roofline_->effective_speed(gpu, work) + fixed_ns;
  return ns * c->ratio(nominal.total_ns);
}

const RooflineCostModel& roofline_of(const CostModel& cost) {
  if (const auto* r = dynamic_cast<const RooflineCostModel*>(&cost)) {
    return *r;
  }
  return dynamic_cast<const MeasuredCostModel&>(cost).roofline();
}

}  // namespace epsim::hardware
