// SPDX-License-Identifier: Apache-2.0
#pragma once
// speculative.* (speculative decoding), over the measured steps: `verifies` (decodes that verified
// drafts), `mean_accepted_tokens` (accepted drafts per verify, E[A]), `acceptance_rate` (accepted over
// proposed drafts), `tokens_per_step` (tokens a verifying request emits per step, E[A] + 1) and
// `draft_time_share` (the steps' time in draft passes over their whole time). Reported only when
// speculative decoding is on.
#include <cstdint>
#include <vector>

#include "sim/summary_metric.hpp"

namespace epsim::serving {

/// One step's sample of SpeculativeMetric (and the window's totals).
struct SpeculativeStep {
  std::int64_t verifies = 0;
  std::int64_t drafted = 0;
  std::int64_t accepted = 0;
  double draft_ns = 0.0;
  double step_ns = 0.0;
  void add(const SpeculativeStep& s) {
    verifies += s.verifies;
    drafted += s.drafted;
    accepted += s.accepted;
    draft_ns += s.draft_ns;
    step_ns += s.step_ns;
  }
};

class SpeculativeMetric final : public FoldedSummaryMetric<SpeculativeStep> {
 public:
  SpeculativeMetric(int groups, const MetricsWindow& window);
  void on_verify(const RequestState& r, std::int64_t drafted, std::int64_t accepted) override;
  void on_step(const StepRecord& step) override;
  void report(const MeasuredWindow& window, std::vector<SummaryFigure>& out) const override;

 private:
  std::vector<SpeculativeStep> pending_;  // per group: the step being completed
};

}  // namespace epsim::serving
