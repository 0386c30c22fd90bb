// SPDX-License-Identifier: Apache-2.0
#include "policies/placement_inputs.hpp"

#include <fmt/format.h>

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "core/error.hpp"
#include "policies/placement_policy.hpp"

namespace epsim::policies {

namespace {
// The product of the extents, or an error naming the input when one is negative.
std::size_t cells(std::string_view input, std::initializer_list<int> extents) {
  std::size_t n = 1;
  for (const int x : extents) {
    if (x < 0) {
      throw core::Error(fmt::format("placement input {}: negative extent {}", input, x));
    }
    n *= static_cast<std::size_t>(x);
  }
  return n;
}

// A read of an input the builders did not fill: names the input and what would have supplied it.
[[noreturn]] void missing(std::string_view input, std::string_view supplier) {
  throw core::Error(
      fmt::format("placement input: no {} was given ({}); a policy reads only the inputs its needs() "
                  "declare, and the builders fill exactly those",
                  input, supplier));
}
}  // namespace

LoadWindow::LoadWindow(int layers, int experts, std::vector<double> total, std::vector<double> per_step,
                       std::vector<std::uint8_t> prefill_steps)
    : layers_(layers),
      experts_(experts),
      total_(std::move(total)),
      per_step_(std::move(per_step)),
      prefill_steps_(std::move(prefill_steps)) {
  const std::size_t matrix = cells("load window", {layers, experts});
  if (total_.size() != matrix) {
    throw core::Error(
        fmt::format("placement input load window: expected a total of {} layers x {} experts = {} values, got {}",
                    layers, experts, matrix, total_.size()));
  }
  if (!per_step_.empty() && (matrix == 0 || per_step_.size() % matrix != 0)) {
    throw core::Error(
        fmt::format("placement input load window: expected whole steps of {} layers x {} experts = {} values, got {}",
                    layers, experts, matrix, per_step_.size()));
  }
  steps_ = per_step_.empty() ? 0 : static_cast<int>(per_step_.size() / matrix);
  if (!prefill_steps_.empty() && prefill_steps_.size() != static_cast<std::size_t>(steps_)) {
    throw core::Error(fmt::format("placement input load window: expected a kind for each of its {} steps, got {}",
                                  steps_, prefill_steps_.size()));
  }
}

ExpertPairCounts::ExpertPairCounts(int layers, int experts, int blocks, std::vector<double> counts,
                                   std::string_view input, std::string_view blocks_shown, std::string_view what)
    : layers_(layers), experts_(experts), counts_(std::move(counts)) {
  const std::size_t n = cells(input, {blocks, experts, experts});
  if (counts_.size() != n) {
    throw core::Error(fmt::format("placement input {}: expected {} x {} x {} experts = {} {}, got {}", input,
                                  blocks_shown, experts, experts, n, what, counts_.size()));
  }
}

Coactivation::Coactivation(int layers, int experts, std::vector<double> counts)
    : ExpertPairCounts(layers, experts, layers, std::move(counts), "co-activation", fmt::format("{} layers", layers),
                       "co-selection counts") {}

LayerTransitions::LayerTransitions(int layers, int experts, std::vector<double> counts)
    : ExpertPairCounts(layers, experts, layers - 1, std::move(counts), "layer transitions",
                       fmt::format("({} layers - 1)", layers), "transition counts") {}

OriginLoad::OriginLoad(int layers, int gpus, int experts, std::vector<double> load, std::vector<double> pass_weight)
    : passes_(pass_weight.empty() ? 1 : static_cast<int>(pass_weight.size())),
      load_(std::move(load)),
      pass_weight_(std::move(pass_weight)) {
  const std::size_t n = cells("origin load", {passes_, layers, gpus, experts});
  if (load_.size() != n) {
    throw core::Error(
        fmt::format("placement input origin load: expected {} pass kinds x {} layers x {} origin GPUs x {} experts = "
                    "{} values, got {}",
                    passes_, layers, gpus, experts, n, load_.size()));
  }
}

LinkBandwidths::LinkBandwidths(int gpus, std::vector<double> bytes_per_ns)
    : gpus_(gpus), values_(std::move(bytes_per_ns)) {
  const std::size_t n = cells("link bandwidths", {gpus, gpus});
  if (values_.size() != n) {
    throw core::Error(fmt::format("placement input link bandwidths: expected {} x {} GPUs = {} values, got {}", gpus,
                                  gpus, n, values_.size()));
  }
}

void PlacementInput::set_cost_curves(std::shared_ptr<const CostCurves> curves) {
  if (curves == nullptr || curves->num_gpus() != num_gpus) {
    throw core::Error(fmt::format("placement input cost curves: expected the curves of {} GPUs, got {}", num_gpus,
                                  curves == nullptr ? std::string("none") : std::to_string(curves->num_gpus())));
  }
  curves_ = std::move(curves);
}

const LoadWindow& PlacementInput::load_window() const {
  if (!load_window_) {
    missing("load window", "PolicyNeeds::load_window supplies it");
  }
  return *load_window_;
}

const LoadWindow& PlacementInput::step_window() const {
  if (!load_window_ || !load_window_->has_steps()) {
    missing("step-by-step load window", "PolicyNeeds::step_window with load_window supplies it");
  }
  return *load_window_;
}

const CostCurves& PlacementInput::cost_curves() const {
  if (!curves_) {
    missing("cost curves", "PolicyNeeds::cost_curves supplies them");
  }
  return *curves_;
}

const Coactivation& PlacementInput::coactivation() const {
  if (!coactivation_) {
    missing("co-activation counts", "PolicyNeeds::coactivation supplies them");
  }
  return *coactivation_;
}

const LayerTransitions& PlacementInput::transitions() const {
  if (!transitions_) {
    missing("cross-layer transitions", "PolicyNeeds::transitions supplies them");
  }
  return *transitions_;
}

const OriginLoad& PlacementInput::origin_load() const {
  if (!origin_load_) {
    missing("per-origin load", "no need supplies it: DIRECTOR's trigger sets it; check has_origin_load()");
  }
  return *origin_load_;
}

const LinkBandwidths& PlacementInput::link_bandwidths() const {
  if (!links_) {
    missing("link bandwidths",
            "no need supplies them: the builders set them from the topology; check "
            "has_link_bandwidths()");
  }
  return *links_;
}

}  // namespace epsim::policies
