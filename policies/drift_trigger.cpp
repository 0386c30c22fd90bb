#include "policies/drift_trigger.hpp"

#include <algorithm>
#include <cmath>

#include "policies/vibe_placement.hpp"
#include "sim/core/error.hpp"

namespace epsim::policies {

DriftTrigger::DriftTrigger(const PlacementInput& shape, std::shared_ptr<const CostCurves> curves,
                           std::vector<double> reference, DriftOptions opt)
    : shape_(shape), curves_(std::move(curves)), opt_(opt), reference_(std::move(reference)) {
  const std::size_t per_step = static_cast<std::size_t>(shape.num_layers) * static_cast<std::size_t>(shape.num_experts);
  if (!curves_ || curves_->num_gpus() != shape.num_gpus) {
    throw core::Error("drift recalibration needs the cost curves of the EP group's GPUs");
  }
  if (!reference_.empty() && reference_.size() != per_step) {
    throw core::Error("drift recalibration: the reference load must have one value per layer and expert");
  }
  if (std::all_of(reference_.begin(), reference_.end(), [](double x) { return x == 0.0; })) {
    reference_.clear();  // no load seen: the first full window becomes the reference
  }
  ring_.assign(static_cast<std::size_t>(opt.window_steps) * per_step, 0);
  sum_.assign(per_step, 0.0);
  shape_.expert_load.clear();
  shape_.window_load.clear();
}

std::optional<Placement> DriftTrigger::on_step(const RebalanceView& view) {
  const std::size_t per_step = sum_.size();
  // Slide the window: drop the oldest pass, add this one.
  auto* slot = ring_.data() + static_cast<std::size_t>(seen_ % opt_.window_steps) * per_step;
  for (std::size_t i = 0; i < per_step; ++i) {
    sum_[i] += view.expert_tokens[i] - slot[i];
    slot[i] = view.expert_tokens[i];
  }
  ++seen_;
  if (solve_at_ >= 0) {
    return seen_ >= solve_at_ && !view.migrating ? recalibrate(view) : std::nullopt;
  }
  if (seen_ < opt_.window_steps || seen_ % opt_.check_every_steps != 0 || seen_ < cool_until_ || view.migrating) {
    return std::nullopt;
  }
  if (reference_.empty()) {
    reference_ = sum_;  // nothing to compare with yet: this window is what the placement serves
    return std::nullopt;
  }
  const auto L = static_cast<std::size_t>(shape_.num_layers);
  const auto E = static_cast<std::size_t>(shape_.num_experts);
  last_distance_ = 0.0;
  for (std::size_t l = 0; l < L; ++l) {
    double dot = 0.0;
    double a2 = 0.0;
    double b2 = 0.0;
    for (std::size_t e = l * E; e < (l + 1) * E; ++e) {
      dot += sum_[e] * reference_[e];
      a2 += sum_[e] * sum_[e];
      b2 += reference_[e] * reference_[e];
    }
    // Cosine is scale-free, so window sums stand for window means. An all-zero vector has no direction:
    // distance 0 (nothing to balance).
    const double d = a2 > 0.0 && b2 > 0.0 ? 1.0 - dot / std::sqrt(a2 * b2) : 0.0;
    last_distance_ = std::max(last_distance_, d);
  }
  if (last_distance_ > opt_.threshold) {
    ++detections_;
    solve_at_ = seen_ + opt_.window_steps;  // a window of routing entirely under the new distribution
  }
  return std::nullopt;
}

std::optional<Placement> DriftTrigger::recalibrate(const RebalanceView& view) {
  // Every layer from the fresh window's mean tokens per pass, starting from the current placement.
  const auto L = static_cast<std::size_t>(shape_.num_layers);
  const auto E = static_cast<std::size_t>(shape_.num_experts);
  solve_at_ = -1;
  ++recalibrations_;
  Placement next = *view.current;
  std::vector<double> w(E);
  for (std::size_t l = 0; l < L; ++l) {
    for (std::size_t e = 0; e < E; ++e) {
      w[e] = sum_[l * E + e] / static_cast<double>(opt_.window_steps);
    }
    LayerPlacement& layer = next.layers[l];
    std::vector<int> phy2log = layer.phy2log;
    const VibeIncrementalResult r = vibe_incremental_layer(phy2log, w, *curves_, layer.num_gpus, layer.slots_per_gpu,
                                                           opt_.tolerance, opt_.max_swaps_per_layer);
    if (r.swaps > 0) {
      layer = make_layer_placement(layer.num_experts, layer.num_gpus, layer.slots_per_gpu, std::move(phy2log));
    }
  }
  reference_ = sum_;
  cool_until_ = seen_ + opt_.check_every_steps;  // H passes of cooldown
  return next;
}

namespace {

class DriftFactory final : public TriggerFactory {
 public:
  explicit DriftFactory(DriftOptions opt) : opt_(opt) {}
  PolicyNeeds needs() const override { return {.load_window = true, .cost_curves = true}; }
  std::unique_ptr<RebalanceTrigger> make(const TriggerContext& ctx, int group) const override {
    return std::make_unique<DriftTrigger>(ctx.group, ctx.curves_of_group(group), ctx.group.expert_load, opt_);
  }

 private:
  DriftOptions opt_;
};

}  // namespace

Registry<TriggerFactory>::Entry drift_trigger_entry() {
  return {
      "drift",
      "ViBE's drift-triggered incremental recalibration: every check_every_steps passes, re-place the layers "
      "whose load drifted (cosine distance > threshold) from a fresh post-detection window",
      [](core::ParamTable& t) -> std::unique_ptr<TriggerFactory> {
        DriftOptions o;
        o.check_every_steps = t.integer("check_every_steps", 10,
                                        "H, forward passes between load-drift checks (and of cooldown)", {1, 1 << 20});
        o.window_steps = t.integer("window_steps", 100, "forward passes averaged into the current load", {1, 1 << 16});
        o.threshold = t.real("threshold", 0.05, "cosine distance of any layer's load that triggers", {0.0, 1.0});
        o.tolerance =
            t.real("tolerance", 0.03, "incremental solver stops within (1 + this) of the mean GPU time", {0.0, 10.0});
        t.finish();
        return std::make_unique<DriftFactory>(o);
      }};
}

}  // namespace epsim::policies
