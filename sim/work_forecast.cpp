// SPDX-License-Identifier: Apache-2.0
#include "sim/work_forecast.hpp"

#include <algorithm>

namespace epsim::serving {

WorkForecast::WorkForecast(const models::ModelSpec& model, int gpus, int attention_tp, std::int64_t max_batch_tokens)
    : cells_(static_cast<std::size_t>(model.num_moe_layers()) * static_cast<std::size_t>(gpus) *
             static_cast<std::size_t>(model.routed_experts)),
      gpus_(gpus),
      tp_(attention_tp),
      budget_(max_batch_tokens) {}

bool WorkForecast::predict(const Scheduler& scheduler, const std::vector<RequestState>& requests,
                           workloads::RoutingSource& source, const policies::PredictionRequest& request) {
  outstanding_.clear();
  if (request.queued_only) {
    scheduler.next_admissions(outstanding_);
  } else {
    scheduler.outstanding_requests(outstanding_);
  }
  predicted_.assign(2 * cells_, 0.0);
  rank_prefill_.assign(static_cast<std::size_t>(scheduler.ranks()), 0);
  std::int64_t decode_passes = 0;
  // Prefill work, then decode work, each into its own half: the two kinds of pass are priced apart.
  for (int phase = 0; phase < 2; ++phase) {
    reqs_.clear();
    origin_.clear();
    for (const auto& [rank, idx] : outstanding_) {
      const RequestState& r = requests[static_cast<std::size_t>(idx)];
      // A prompt still to prefill emits its request's next token itself: one decode step fewer.
      const std::int64_t decodes = r.spec.output_tokens - r.generated - (r.prefill_done() ? 0 : 1);
      const std::int64_t tokens =
          phase == 0 ? r.prefill_target - r.prefilled : std::min<std::int64_t>(decodes, request.horizon_steps);
      if (tokens <= 0) {
        continue;
      }
      if (phase == 0) {
        rank_prefill_[static_cast<std::size_t>(rank)] += tokens;
      } else {
        decode_passes = std::max(decode_passes, tokens);
      }
      // The rank's tokens leave for the experts from all its GPUs: its first stands for them.
      reqs_.push_back(workloads::RequestTokens{r.spec.id, r.spec.arrival_ns, tokens, phase == 0});
      origin_.push_back(rank * tp_);
    }
    if (!source.expected_load(
            reqs_, origin_, gpus_,
            std::span<double>(predicted_).subspan(static_cast<std::size_t>(phase) * cells_, cells_))) {
      return false;
    }
  }
  const std::int64_t prefill_tokens = *std::max_element(rank_prefill_.begin(), rank_prefill_.end());
  const std::int64_t prefill_passes = (prefill_tokens + budget_ - 1) / budget_;  // whole steps, rounded up
  passes_[0] = static_cast<double>(prefill_passes);
  passes_[1] = static_cast<double>(decode_passes);
  return true;
}

}  // namespace epsim::serving
