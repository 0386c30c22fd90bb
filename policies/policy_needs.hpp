// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a policy declares it needs before it can act. build_simulation (and `epsim place`) ask the
// declaration, never a policy's name, to decide what to profile: a new policy states its inputs here.
// PlacementInput's checked accessors name the need when a policy reads an input it did not declare.
namespace epsim::policies {

struct PolicyNeeds {
  bool load_window = false;   ///< PlacementInput::load_window() (a profiled load window)
  bool step_window = false;   ///< scores the window step by step (PlacementInput::step_window()), not only its total
  bool cost_curves = false;   ///< PlacementInput::cost_curves() (C_g(n) of the group's GPUs)
  bool coactivation = false;  ///< PlacementInput::coactivation() (co-selection counts)
  bool transitions = false;   ///< PlacementInput::transitions() (cross-layer expert transitions)
  bool origins = false;       ///< per-origin token counts in every step (routing: StepLayerLoad::origin_tokens)
  bool predictions = false;   ///< a forecast of the group's queued work (rebalancing: RebalanceView::predicted_load)

  PolicyNeeds operator|(const PolicyNeeds& o) const {
    return {load_window || o.load_window,   step_window || o.step_window, cost_curves || o.cost_curves,
            coactivation || o.coactivation, transitions || o.transitions, origins || o.origins,
            predictions || o.predictions};
  }
  bool operator==(const PolicyNeeds&) const = default;
};

}  // namespace epsim::policies
