// SPDX-License-Identifier: Apache-2.0
#include "policies/vibe/drift_trigger.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "policies/vibe/vibe_placement.hpp"

namespace epsim::policies {

DriftTrigger::DriftTrigger(const PlacementInput& shape, std::shared_ptr<const CostCurves> curves, DriftOptions opt)
    : shape_(shape), curves_(std::move(curves)), opt_(opt) {
  const std::size_t per_step = static_cast<std::size_t>(shape.num_layers) * static_cast<std::size_t>(shape.num_experts);
  if (!curves_ || curves_->num_gpus() != shape.num_gpus) {
    throw core::Error("drift recalibration needs the cost curves of the EP group's GPUs");
  }
  ring_.assign(static_cast<std::size_t>(opt.window_steps) * per_step, 0);
  ring_class_.assign(static_cast<std::size_t>(opt.window_steps), 0);
  sum_.assign(per_step, 0.0);
  class_sum_[0].assign(per_step, 0.0);
  class_sum_[1].assign(per_step, 0.0);
  shape_.clear_load_window();
}

std::optional<Placement> DriftTrigger::on_step(const RebalanceView& view) {
  const std::size_t per_step = sum_.size();
  // Slide the window: drop the oldest pass (from its class too), add this one.
  const auto at = static_cast<std::size_t>(seen_ % opt_.window_steps);
  auto* slot = ring_.data() + at * per_step;
  const int old_class = ring_class_[at];
  const int cls = view.prefill_tokens > 0 ? 1 : 0;
  const bool full = seen_ >= opt_.window_steps;
  std::vector<double>& old_sum = class_sum_[static_cast<std::size_t>(old_class)];
  std::vector<double>& new_sum = class_sum_[static_cast<std::size_t>(cls)];
  for (std::size_t i = 0; i < per_step; ++i) {
    sum_[i] += view.expert_tokens[i] - slot[i];
    old_sum[i] -= slot[i];
    new_sum[i] += view.expert_tokens[i];
    slot[i] = view.expert_tokens[i];
  }
  if (full) {
    --class_count_[static_cast<std::size_t>(old_class)];
  }
  ++class_count_[static_cast<std::size_t>(cls)];
  ring_class_[at] = static_cast<std::uint8_t>(cls);
  ++seen_;
  if (solve_at_ >= 0) {
    return seen_ >= solve_at_ && !view.migrating ? recalibrate(view) : std::nullopt;
  }
  if (seen_ < opt_.window_steps || seen_ % opt_.check_every_steps != 0 || seen_ < cool_until_ || view.migrating) {
    return std::nullopt;
  }
  // Decode-only passes stand for the workload whenever there are enough of them: a pass with prompt
  // tokens mixes a chunk of some length with decode tokens, so that class moves with chunk sizes too.
  // Prompt passes are compared when decode-only ones are rare (a prefill pool, a prefill-only workload).
  last_distance_ = 4 * class_count_[0] >= opt_.window_steps ? class_distance(0) : class_distance(1);
  if (last_distance_ > opt_.threshold) {
    ++detections_;
    solve_at_ = seen_ + opt_.window_steps;  // a window of routing entirely under the new distribution
  }
  return std::nullopt;
}

double DriftTrigger::class_distance(int c) {
  const auto ci = static_cast<std::size_t>(c);
  if (4 * class_count_[ci] < opt_.window_steps) {
    return 0.0;  // too few passes of this class to stand for the workload
  }
  if (class_ref_[ci].empty()) {
    class_ref_[ci] = class_sum_[ci];  // nothing to compare with yet: this window is what is served
    return 0.0;
  }
  const auto L = static_cast<std::size_t>(shape_.num_layers);
  const auto E = static_cast<std::size_t>(shape_.num_experts);
  const std::vector<double>& w = class_sum_[ci];
  const std::vector<double>& ref = class_ref_[ci];
  double worst = 0.0;
  for (std::size_t l = 0; l < L; ++l) {
    double dot = 0.0;
    double a2 = 0.0;
    double b2 = 0.0;
    double ta = 0.0;
    double tb = 0.0;
    for (std::size_t e = l * E; e < (l + 1) * E; ++e) {
      dot += w[e] * ref[e];
      a2 += w[e] * w[e];
      b2 += ref[e] * ref[e];
      ta += w[e];
      tb += ref[e];
    }
    // Cosine is scale-free, so window sums stand for window means. An all-zero vector has no direction:
    // distance 0 (nothing to balance).
    if (!(a2 > 0.0 && b2 > 0.0)) {
      continue;
    }
    const double d = 1.0 - dot / std::sqrt(a2 * b2);
    // Two windows of the same distribution still differ by sampling: T pairs drawn from p move the
    // direction by E[1 - cos] ~ (1 - sum p^2) / (2 T sum p^2) each. At low load (a few thousand pairs a
    // window) that alone reaches the paper's 0.05, so the expected sampling distance of both windows is
    // taken off and only the rest counts as drift (our addition; negligible at the paper's loads).
    const double sa = a2 / (ta * ta);
    const double sb = b2 / (tb * tb);
    const double noise = (1.0 - sa) / (2.0 * ta * sa) + (1.0 - sb) / (2.0 * tb * sb);
    worst = std::max(worst, d - noise);
  }
  return worst;
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
  // The new references: this window's classes (one too rare here is taken when it is common enough).
  for (std::size_t ci = 0; ci < 2; ++ci) {
    if (4 * class_count_[ci] >= opt_.window_steps) {
      class_ref_[ci] = class_sum_[ci];
    } else {
      class_ref_[ci].clear();
    }
  }
  cool_until_ = seen_ + opt_.check_every_steps;  // H passes of cooldown
  return next;
}

namespace {

class DriftFactory final : public TriggerFactory {
 public:
  explicit DriftFactory(DriftOptions opt) : opt_(opt) {}
  PolicyNeeds needs() const override { return {.cost_curves = true}; }
  std::unique_ptr<RebalanceTrigger> make(const TriggerContext& ctx, int group) const override {
    return std::make_unique<DriftTrigger>(ctx.group, ctx.curves_of_group(group), opt_);
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
