// SPDX-License-Identifier: Apache-2.0
#include "policies/director/director_reconfigure.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"
#include "policies/assignment_lp.hpp"
#include "policies/director/director_polish.hpp"

namespace epsim::policies {

std::vector<int> relabel_for_overlap(std::span<const int> current_gpu_of, std::span<const int> next_gpu_of, int gpus) {
  if (current_gpu_of.size() != next_gpu_of.size() || gpus <= 0) {
    throw core::Error(fmt::format("director: relabelling expects two placements of one layer, got {} and {} experts",
                                  current_gpu_of.size(), next_gpu_of.size()));
  }
  const auto G = static_cast<std::size_t>(gpus);
  // overlap[g * G + h]: experts on new GPU g that sit on GPU h now.
  std::vector<double> overlap(G * G, 0.0);
  for (std::size_t i = 0; i < next_gpu_of.size(); ++i) {
    overlap[static_cast<std::size_t>(next_gpu_of[i]) * G + static_cast<std::size_t>(current_gpu_of[i])] += 1.0;
  }
  // The relabelling of the new GPUs that keeps the most experts where they are.
  const std::vector<int> perm = max_value_assignment(overlap, gpus, "director: the relabelling");
  std::vector<int> out(next_gpu_of.size());
  for (std::size_t i = 0; i < next_gpu_of.size(); ++i) {
    out[i] = perm[static_cast<std::size_t>(next_gpu_of[i])];
  }
  return out;
}

ReconfigureResult reconfigure(const DirectorProblem& p, std::span<const int> current_gpu_of,
                              std::span<const int> next_gpu_of, double min_gain, int polish_sweeps) {
  const auto E = static_cast<std::size_t>(p.experts);
  const std::size_t n = static_cast<std::size_t>(p.layers) * E;
  if (current_gpu_of.size() != n || next_gpu_of.size() != n) {
    throw core::Error(
        fmt::format("director: reconfiguration expects placements of {} layers x {} experts, got {} and {}", p.layers,
                    p.experts, current_gpu_of.size(), next_gpu_of.size()));
  }
  ReconfigureResult r;
  r.gpu_of.assign(next_gpu_of.begin(), next_gpu_of.end());
  for (int l = 0; l < p.layers; ++l) {
    const std::size_t at = static_cast<std::size_t>(l) * E;
    const auto cur = current_gpu_of.subspan(at, E);
    const auto next = next_gpu_of.subspan(at, E);
    const std::vector<int> relabelled = relabel_for_overlap(cur, next, p.gpus);
    const double next_ns = director_layer_cost(p, l, next).total_ns();
    const double relabelled_ns = director_layer_cost(p, l, relabelled).total_ns();
    std::span<const int> chosen = next;
    double chosen_ns = next_ns;
    if (relabelled_ns <= next_ns * (1.0 + 1e-12)) {
      chosen = relabelled;
      chosen_ns = relabelled_ns;
    }
    // From the fewest moves up, a candidate with more moves must gain min_gain over the one chosen so far:
    // the current layer, then the current layer polished under the new W, then the new one.
    std::vector<int> polished(cur.begin(), cur.end());
    polish_layer(p, l, polished, polish_sweeps);
    const double current_ns = director_layer_cost(p, l, cur).total_ns();
    const double polished_ns = director_layer_cost(p, l, polished).total_ns();
    std::span<const int> pick = cur;
    double pick_ns = current_ns;
    if (polished_ns < pick_ns * (1.0 - min_gain)) {
      pick = polished;
      pick_ns = polished_ns;
    }
    if (chosen_ns < pick_ns * (1.0 - min_gain)) {
      pick = chosen;
    }
    r.layers_kept += pick.data() == cur.data() ? 1 : 0;
    r.layers_polished += pick.data() == polished.data() ? 1 : 0;
    r.layers_relabelled +=
        pick.data() == relabelled.data() && !std::equal(relabelled.begin(), relabelled.end(), next.begin()) ? 1 : 0;
    for (std::size_t i = 0; i < E; ++i) {
      r.gpu_of[at + i] = pick[i];
      r.experts_moved += pick[i] != cur[i] ? 1 : 0;
    }
  }
  return r;
}

}  // namespace epsim::policies
