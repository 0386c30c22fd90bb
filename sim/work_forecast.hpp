// SPDX-License-Identifier: Apache-2.0
#pragma once
// The forecast a rebalance trigger may ask for (policies::PredictionRequest): the expected routing of
// an EP group's queued and running requests (or only of the queued ones its next admissions take) over
// the trigger's horizon, prompts and decodes apart, from the routing source's expected load. Built only
// when the configured trigger declares PolicyNeeds::predictions; its buffers are reused every call.
#include <array>
#include <span>
#include <utility>
#include <vector>

#include "models/model_spec.hpp"
#include "policies/rebalance_trigger.hpp"
#include "sim/request_state.hpp"
#include "sim/scheduler.hpp"
#include "workloads/routing_source.hpp"

namespace epsim::serving {

class WorkForecast {
 public:
  /// `gpus`: GPUs per EP group; `attention_tp`: GPUs per rank; `max_batch_tokens`: a rank's step budget.
  WorkForecast(const models::ModelSpec& model, int gpus, int attention_tp, std::int64_t max_batch_tokens);

  /// Predicts the work `request` asks for of the group `scheduler` serves; false when the routing source
  /// cannot predict (a replayed trace). On success load() and passes() hold the forecast.
  bool predict(const Scheduler& scheduler, const std::vector<RequestState>& requests, workloads::RoutingSource& source,
               const policies::PredictionRequest& request);
  /// [phase][layer][origin GPU][expert] token-expert pairs, prompts (phase 0) apart from decodes.
  std::span<const double> load() const { return predicted_; }
  /// Forward passes per phase: the busiest rank's prompt tokens over the step budget (rounded up), and
  /// the longest decode ahead within the horizon.
  const std::array<double, 2>& passes() const { return passes_; }

 private:
  std::size_t cells_;  // layers x gpus x experts of one phase
  int gpus_;
  int tp_;
  std::int64_t budget_;
  std::vector<std::pair<int, int>> outstanding_;
  std::vector<workloads::RequestTokens> reqs_;
  std::vector<int> origin_;
  std::vector<std::int64_t> rank_prefill_;
  std::vector<double> predicted_;
  std::array<double, 2> passes_{};
};

}  // namespace epsim::serving
