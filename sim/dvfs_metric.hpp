// SPDX-License-Identifier: Apache-2.0
#pragma once
// dvfs.* (a power limiter clocks the GPUs: hardware/dvfs.hpp), over the measured steps: `clock_mean`
// (the GPUs' clock over their cold clock, averaged over GPUs and weighted by step time) and `clock_min`
// (the lowest clock any GPU ran a measured step at). Reported only when the limiter is on.
#include <algorithm>

#include "sim/summary_metric.hpp"

namespace epsim::serving {

/// One step's sample of DvfsMetric (and the window's totals).
struct DvfsStep {
  double clock_ns = 0.0;  ///< mean clock x step time
  double step_ns = 0.0;
  double clock_min = 1.0;
  void add(const DvfsStep& s) {
    clock_ns += s.clock_ns;
    step_ns += s.step_ns;
    clock_min = std::min(clock_min, s.clock_min);
  }
};

class DvfsMetric final : public FoldedSummaryMetric<DvfsStep> {
 public:
  explicit DvfsMetric(const MetricsWindow& window) : FoldedSummaryMetric(window) {}
  void on_step(const StepRecord& step) override {
    steps_.add(step.start_ns, DvfsStep{step.clock_mean * step.duration_ns, step.duration_ns, step.clock_min});
  }
  void report(const MeasuredWindow& window, std::vector<SummaryFigure>& out) const override {
    const DvfsStep t = steps_.total(window.begin_ns, window.end_ns);
    out.push_back({"dvfs.clock_mean", t.step_ns > 0.0 ? t.clock_ns / t.step_ns : 1.0});
    out.push_back({"dvfs.clock_min", t.clock_min});
  }
};

}  // namespace epsim::serving
