// SPDX-License-Identifier: Apache-2.0
#include "sim/speculative_metric.hpp"

namespace epsim::serving {

SpeculativeMetric::SpeculativeMetric(int groups, const MetricsWindow& window)
    : FoldedSummaryMetric(window), pending_(static_cast<std::size_t>(groups)) {}

void SpeculativeMetric::on_verify(const RequestState& r, std::int64_t drafted, std::int64_t accepted) {
  // A step's verifies complete just before its on_step, in the request's (decoding) group.
  SpeculativeStep& s = pending_.at(static_cast<std::size_t>(r.group));
  ++s.verifies;
  s.drafted += drafted;
  s.accepted += accepted;
}

void SpeculativeMetric::on_step(const StepRecord& step) {
  SpeculativeStep& s = pending_.at(static_cast<std::size_t>(step.group));
  s.draft_ns = step.draft_ns;
  s.step_ns = step.duration_ns;
  steps_.add(step.start_ns, s);
  s = SpeculativeStep{};
}

void SpeculativeMetric::report(const MeasuredWindow& window, std::vector<SummaryFigure>& out) const {
  const SpeculativeStep t = steps_.total(window.begin_ns, window.end_ns);
  const auto ratio = [](double a, double b) { return b > 0.0 ? a / b : 0.0; };
  const auto verifies = static_cast<double>(t.verifies);
  out.push_back({"speculative.verifies", verifies});
  out.push_back({"speculative.mean_accepted_tokens", ratio(static_cast<double>(t.accepted), verifies)});
  out.push_back(
      {"speculative.acceptance_rate", ratio(static_cast<double>(t.accepted), static_cast<double>(t.drafted))});
  out.push_back({"speculative.tokens_per_step", ratio(static_cast<double>(t.accepted) + verifies, verifies)});
  out.push_back({"speculative.draft_time_share", ratio(t.draft_ns, t.step_ns)});
}

}  // namespace epsim::serving
