#include "hardware/measured_cost_model.hpp"

namespace epsim::hardware {

MeasuredCostModel::MeasuredCostModel(std::unique_ptr<RooflineCostModel> roofline, KernelCurves curves,
                                     std::string measured_gpu)
    : roofline_(std::move(roofline)), curves_(std::move(curves)), measured_gpu_(std::move(measured_gpu)) {}

const MeasuredCurve* MeasuredCostModel::curve(int gpu, OpKind kind) const {
  const MeasuredCurve* c = curves_[static_cast<std::size_t>(kind)].get();
  return c != nullptr && !c->empty() && roofline_->gpu_of(gpu).name == measured_gpu_ ? c : nullptr;
}

double MeasuredCostModel::kernel_ns(int gpu, const KernelWork& work) const {
  const double ns = roofline_->kernel_ns(gpu, work);
  const MeasuredCurve* c = curve(gpu, work.kind);
  if (c == nullptr) {
    return ns;
  }
  return ns * c->ratio(roofline_cost(roofline_->gpu_of(gpu), work).total_ns);
}

const RooflineCostModel& roofline_of(const CostModel& cost) {
  if (const auto* r = dynamic_cast<const RooflineCostModel*>(&cost)) {
    return *r;
  }
  return dynamic_cast<const MeasuredCostModel&>(cost).roofline();
}

}  // namespace epsim::hardware
