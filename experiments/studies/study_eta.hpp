// SPDX-License-Identifier: Apache-2.0
#pragma once
// How long a study's remaining runs will take. Runs differ in cost by orders of magnitude (a 64-GPU
// setup with a max-rate search against an 8-GPU single run), so the mean time of the finished runs
// (the old ETA) was 2-3x optimistic when the expensive runs came last. Each run gets a cost weight
// from its configuration; the finished runs give the seconds per unit of weight; the remaining weight
// at that rate, spread over the workers, is the ETA.
#include <cstdint>
#include <optional>
#include <vector>

#include "experiments/studies/study_plan.hpp"

namespace epsim::experiments {

/// A run's relative cost: the GPUs it simulates times the requests it serves (for a run that also
/// searches its max rate, plus max_probes probes of its measured_requests). Simulated work grows with
/// both: every step touches every GPU, and the steps grow with the requests served.
double run_cost_weight(const StudySpec& spec, const ExperimentConfig& cfg);

/// The weights of `runs` (indices into the plan), in that order.
std::vector<double> run_cost_weights(const StudySpec& spec, const StudyPlan& plan,
                                     const std::vector<std::int64_t>& runs);

/// Positions 0 .. weights.size() - 1, heaviest first; equal weights keep their order.
std::vector<std::size_t> longest_first(const std::vector<double>& weights);

class EtaEstimator {
 public:
  /// `weights[i]` is run i's cost weight (run_cost_weight); `jobs` runs at once.
  EtaEstimator(std::vector<double> weights, int jobs);

  /// Run i finished after `wall_s` seconds.
  void finished(std::size_t i, double wall_s);

  /// Seconds until every run has finished, given the seconds the running ones have run so far (by
  /// run index); nullopt before any run has finished (nothing to scale the weights by).
  std::optional<double> remaining_s(const std::vector<std::pair<std::size_t, double>>& running) const;

  /// Seconds per unit of weight over the finished runs (nullopt before any has finished).
  std::optional<double> seconds_per_weight() const;

 private:
  std::vector<double> weights_;
  std::vector<bool> done_;
  int jobs_ = 1;
  double done_weight_ = 0.0;
  double done_wall_s_ = 0.0;
};

}  // namespace epsim::experiments
