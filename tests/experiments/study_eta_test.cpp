// SPDX-License-Identifier: Apache-2.0
// The sweep's ETA: runs weighted by their cost (GPUs x requests) instead of the mean of the finished
// ones, which was 2-3x optimistic (here 10x) when the expensive runs come last. A synthetic schedule
// whose run times are exactly proportional to the weights gives the exact remaining time.
#include <catch2/catch.hpp>
#include <string>

#include "experiments/studies/study_eta.hpp"
#include "experiments/studies/study_spec.hpp"

using namespace epsim::experiments;

TEST_CASE("the ETA of a schedule whose expensive runs come last is exact, the mean-of-finished one is not") {
  // Four cheap runs then two that weigh 10x; every run takes 2 s per unit of weight.
  const std::vector<double> weights{1, 1, 1, 1, 10, 10};
  EtaEstimator one_job(weights, 1);
  REQUIRE(!one_job.remaining_s({}).has_value());  // nothing finished: nothing to scale by
  for (std::size_t i = 0; i < 4; ++i) {
    one_job.finished(i, 2.0 * weights[i]);
  }
  REQUIRE(one_job.seconds_per_weight().value() == 2.0);
  // Left: 2 x (10 + 10) = 40 s. The old estimate, 8 s / 4 runs x 2 runs left, said 4 s.
  REQUIRE(one_job.remaining_s({}).value() == 40.0);
  // Run 4 has been running 5 s of its 20: 35 s left on one worker.
  REQUIRE(one_job.remaining_s({{4, 5.0}}).value() == 35.0);
  // A run past its estimate counts as about to end, never as negative work.
  REQUIRE(one_job.remaining_s({{4, 25.0}}).value() == 20.0);
  one_job.finished(4, 20.0);
  one_job.finished(5, 20.0);
  REQUIRE(one_job.remaining_s({}).value() == 0.0);

  // Two workers share what is left; a finished run reported twice counts once.
  EtaEstimator two_jobs(weights, 2);
  two_jobs.finished(0, 2.0);
  two_jobs.finished(0, 2.0);
  REQUIRE(two_jobs.seconds_per_weight().value() == 2.0);
  // Left: 2 x (1 + 1 + 1 + 10 + 10) = 46 s over 2 workers.
  REQUIRE(two_jobs.remaining_s({}).value() == 23.0);
}

TEST_CASE("a run's cost weight is its GPUs times its requests, plus the probes of a max-rate search") {
  const std::string data = EPSIM_TEST_DATA_DIR;
  // small.toml: 4 GPUs, 40 requests.
  StudySpec s = load_study_text("[study]\nbase = \"small.toml\"\n", "s.toml", data);
  const ExperimentConfig cfg = load_config_tables(s.base, s.base_source, {}, "s.toml");
  REQUIRE(run_cost_weight(s, cfg) == 4.0 * 40.0);
  // A duration limit shorter than the count: 4 req/s x 5 s = 20 requests.
  ExperimentConfig by_time = cfg;
  by_time.workload.duration_s = 5.0;
  REQUIRE(run_cost_weight(s, by_time) == 4.0 * 20.0);
  s.max_rate = SloSearchOptions{};
  s.max_rate->max_probes = 8;
  s.max_rate->measured_requests = 100;
  REQUIRE(run_cost_weight(s, cfg) == 4.0 * (40.0 + 8.0 * 100.0));
}

TEST_CASE("runs start heaviest first, and equal weights keep the plan's order") {
  REQUIRE(longest_first({}).empty());
  REQUIRE(longest_first({1.0, 5.0, 3.0, 5.0, 1.0}) == std::vector<std::size_t>{1, 3, 2, 0, 4});
  REQUIRE(longest_first({2.0, 2.0, 2.0}) == std::vector<std::size_t>{0, 1, 2});
}
