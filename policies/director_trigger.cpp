#include "policies/director_trigger.hpp"

#include <numeric>

#include "sim/core/error.hpp"

namespace epsim::policies {

DirectorTrigger::DirectorTrigger(PlacementInput shape, DirectorOptions opt, DirectorTriggerOptions trig,
                                 std::vector<double> popularity)
    : shape_(std::move(shape)), policy_(std::move(opt)), trig_(trig), popularity_(std::move(popularity)) {
  const auto L = static_cast<std::size_t>(shape_.num_layers);
  const auto E = static_cast<std::size_t>(shape_.num_experts);
  if (!shape_.curves) {
    throw core::Error("director rebalancing needs the cost curves of the EP group's GPUs");
  }
  if (trig_.interval_steps < 1 || trig_.horizon_steps < 1 || !(trig_.accuracy >= 0.0 && trig_.accuracy <= 1.0)) {
    throw core::Error("director rebalancing: interval and horizon must be >= 1 step, the accuracy in [0, 1]");
  }
  if (popularity_.size() != L * E) {
    popularity_.assign(L * E, 1.0);  // no history: wrong guesses are uniform
  }
  for (std::size_t l = 0; l < L; ++l) {
    const double sum = std::accumulate(popularity_.begin() + static_cast<std::ptrdiff_t>(l * E),
                                       popularity_.begin() + static_cast<std::ptrdiff_t>((l + 1) * E), 0.0);
    for (std::size_t e = 0; e < E; ++e) {
      popularity_[l * E + e] = sum > 0.0 ? popularity_[l * E + e] / sum : 1.0 / static_cast<double>(E);
    }
  }
  observed_.assign(L * E, 0.0);
  shape_.expert_load.clear();
  shape_.window_load.clear();
  shape_.window_steps = 0;
}

bool DirectorTrigger::needs_prediction() const {
  return trig_.mode == DirectorTriggerOptions::Mode::proactive && (seen_ + 1) % trig_.interval_steps == 0;
}

std::optional<Placement> DirectorTrigger::on_step(const RebalanceView& view) {
  const auto L = static_cast<std::size_t>(shape_.num_layers);
  const auto E = static_cast<std::size_t>(shape_.num_experts);
  const auto G = static_cast<std::size_t>(shape_.num_gpus);
  for (std::size_t i = 0; i < L * E; ++i) {
    observed_[i] += view.expert_tokens[i];
  }
  ++seen_;
  if (seen_ % trig_.interval_steps != 0 || view.migrating) {
    return std::nullopt;
  }
  PlacementInput in = shape_;
  in.origin_load.assign(L * G * E, 0.0);
  if (trig_.mode == DirectorTriggerOptions::Mode::proactive) {
    if (view.predicted_load.size() != L * G * E) {
      return std::nullopt;  // nothing to predict from (a replayed trace)
    }
    // Per step: the optimiser prices one forward pass's loads on the cost curves.
    const double p = trig_.accuracy;
    const double per_step = 1.0 / static_cast<double>(trig_.horizon_steps);
    for (std::size_t l = 0; l < L; ++l) {
      for (std::size_t o = 0; o < G; ++o) {
        const double* w = view.predicted_load.data() + (l * G + o) * E;
        const double tokens = std::accumulate(w, w + E, 0.0);
        for (std::size_t e = 0; e < E; ++e) {
          in.origin_load[(l * G + o) * E + e] = per_step * (p * w[e] + (1.0 - p) * tokens * popularity_[l * E + e]);
        }
      }
    }
  } else {
    for (std::size_t l = 0; l < L; ++l) {
      for (std::size_t o = 0; o < G; ++o) {
        for (std::size_t e = 0; e < E; ++e) {
          in.origin_load[(l * G + o) * E + e] =
              observed_[l * E + e] / static_cast<double>(G) / static_cast<double>(trig_.interval_steps);
        }
      }
    }
  }
  std::fill(observed_.begin(), observed_.end(), 0.0);
  in.expert_load.assign(L * E, 0.0);
  for (std::size_t l = 0; l < L; ++l) {
    for (std::size_t o = 0; o < G; ++o) {
      for (std::size_t e = 0; e < E; ++e) {
        in.expert_load[l * E + e] += in.origin_load[(l * G + o) * E + e];
      }
    }
  }
  if (std::accumulate(in.expert_load.begin(), in.expert_load.end(), 0.0) <= 0.0) {
    return std::nullopt;  // no work ahead
  }
  ++solves_;
  Placement next = policy_.place(in);
  gap_sum_ += policy_.last_report().gap;
  bool same = true;
  for (std::size_t l = 0; l < L && same; ++l) {
    same = next.layers[l].phy2log == view.current->layers[l].phy2log;
  }
  return same ? std::nullopt : std::optional<Placement>(std::move(next));
}

}  // namespace epsim::policies
