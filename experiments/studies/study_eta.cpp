// SPDX-License-Identifier: Apache-2.0
#include "experiments/studies/study_eta.hpp"

#include <algorithm>
#include <numeric>

namespace epsim::experiments {

double run_cost_weight(const StudySpec& spec, const ExperimentConfig& cfg) {
  const workloads::WorkloadConfig& w = cfg.workload;
  double requests = static_cast<double>(w.num_requests);
  if (w.duration_s > 0.0) {
    const double by_duration = w.duration_s * w.arrivals.rate_rps;
    requests = requests > 0.0 ? std::min(requests, by_duration) : by_duration;
  }
  if (spec.max_rate) {
    requests += static_cast<double>(spec.max_rate->max_probes) * static_cast<double>(spec.max_rate->measured_requests);
  }
  return std::max(1.0, static_cast<double>(cfg.cluster.num_gpus())) * std::max(1.0, requests);
}

std::vector<double> run_cost_weights(const StudySpec& spec, const StudyPlan& plan,
                                     const std::vector<std::int64_t>& runs) {
  std::vector<double> out;
  out.reserve(runs.size());
  for (const std::int64_t r : runs) {
    // Replications differ in seeds only: the point's configuration weighs the same.
    out.push_back(run_cost_weight(spec, plan.points[static_cast<std::size_t>(plan.run(r).point)].config));
  }
  return out;
}

std::vector<std::size_t> longest_first(const std::vector<double>& weights) {
  std::vector<std::size_t> order(weights.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return weights[a] > weights[b]; });
  return order;
}

EtaEstimator::EtaEstimator(std::vector<double> weights, int jobs)
    : weights_(std::move(weights)), done_(weights_.size(), false), jobs_(std::max(1, jobs)) {}

void EtaEstimator::finished(std::size_t i, double wall_s) {
  if (i >= weights_.size() || done_[i]) {
    return;
  }
  done_[i] = true;
  done_weight_ += weights_[i];
  done_wall_s_ += std::max(0.0, wall_s);
}

std::optional<double> EtaEstimator::seconds_per_weight() const {
  if (done_weight_ <= 0.0) {
    return std::nullopt;
  }
  return done_wall_s_ / done_weight_;
}

std::optional<double> EtaEstimator::remaining_s(const std::vector<std::pair<std::size_t, double>>& running) const {
  const std::optional<double> rate = seconds_per_weight();
  if (!rate) {
    return std::nullopt;
  }
  // The work left: every unfinished run at the fitted rate, less what the running ones have done (a
  // run past its estimate counts as about to end).
  double left_s = 0.0;
  std::size_t unfinished = 0;
  for (std::size_t i = 0; i < weights_.size(); ++i) {
    if (!done_[i]) {
      left_s += weights_[i] * *rate;
      ++unfinished;
    }
  }
  for (const auto& [i, elapsed_s] : running) {
    if (i < weights_.size() && !done_[i]) {
      left_s -= std::min(weights_[i] * *rate, std::max(0.0, elapsed_s));
    }
  }
  const auto workers = static_cast<double>(std::min<std::size_t>(static_cast<std::size_t>(jobs_), unfinished));
  return unfinished == 0 ? 0.0 : std::max(0.0, left_s) / workers;
}

}  // namespace epsim::experiments
