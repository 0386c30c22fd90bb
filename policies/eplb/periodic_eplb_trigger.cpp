// SPDX-License-Identifier: Apache-2.0
#include "policies/eplb/periodic_eplb_trigger.hpp"

#include <algorithm>

#include "policies/eplb/eplb_placement.hpp"

namespace epsim::policies {

PeriodicEplbTrigger::PeriodicEplbTrigger(const PlacementInput& shape, PeriodicEplbOptions opt,
                                         std::unique_ptr<PlacementPolicy> eplb)
    : shape_(PlacementInput::shape(shape.num_layers, shape.num_experts, shape.num_gpus, shape.num_nodes,
                                   shape.slots_per_gpu, shape.num_groups)),
      opt_(opt),
      eplb_(eplb ? std::move(eplb) : std::make_unique<EplbPlacement>()),
      ring_(static_cast<std::size_t>(opt.window_steps) * static_cast<std::size_t>(shape.num_layers) *
                static_cast<std::size_t>(shape.num_experts),
            0) {}

std::optional<Placement> PeriodicEplbTrigger::on_step(const RebalanceView& view) {
  const std::size_t per_step = view.expert_tokens.size();
  std::copy(
      view.expert_tokens.begin(), view.expert_tokens.end(),
      ring_.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(seen_ % opt_.window_steps) * per_step));
  ++seen_;
  if (seen_ % opt_.interval_steps != 0) {
    return std::nullopt;
  }
  // The window's total load per expert (fewer steps if the run is younger than the window).
  PlacementInput in = shape_;
  std::vector<double> total(per_step, 0.0);
  const std::int64_t steps = std::min(seen_, opt_.window_steps);
  for (std::int64_t s = 0; s < steps; ++s) {
    for (std::size_t i = 0; i < per_step; ++i) {
      total[i] += ring_[static_cast<std::size_t>(s) * per_step + i];
    }
  }
  in.set_load_window(std::move(total));
  return eplb_->place(in);
}

namespace {

class PeriodicEplbFactory final : public TriggerFactory {
 public:
  explicit PeriodicEplbFactory(PeriodicEplbOptions opt) : opt_(opt) {}
  PolicyNeeds needs() const override { return {}; }
  bool fills_redundant_slots() const override { return true; }  // EPLB replicates over every slot
  std::unique_ptr<RebalanceTrigger> make(const TriggerContext& ctx, int /*group*/) const override {
    return std::make_unique<PeriodicEplbTrigger>(ctx.group, opt_, ctx.run_eplb ? ctx.run_eplb() : nullptr);
  }

 private:
  PeriodicEplbOptions opt_;
};

}  // namespace

Registry<TriggerFactory>::Entry periodic_eplb_trigger_entry() {
  return {"periodic",
          "vLLM-style EPLB: every interval_steps steps, re-place by EPLB from the last window_steps steps' loads "
          "(the run's own EPLB variant when it places by EPLB, else the reference)",
          [](core::ParamTable& t) -> std::unique_ptr<TriggerFactory> {
            PeriodicEplbOptions o;
            o.window_steps = t.integer("window_steps", 64, "steps of expert loads the EPLB solve sees", {1, 1 << 20});
            o.interval_steps = t.integer("interval_steps", 256, "steps between EPLB solves", {1, 1LL << 40});
            t.finish();
            return std::make_unique<PeriodicEplbFactory>(o);
          }};
}

}  // namespace epsim::policies
