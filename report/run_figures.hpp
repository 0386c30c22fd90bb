// SPDX-License-Identifier: Apache-2.0
#pragma once
// The figures of run directories: TTFT / TPOT / E2E CDFs of every run together, and per run the
// per-GPU x per-layer straggler heat map (gpu_layers.csv) and the step-time / queue time series
// (steps.csv) with migrations, rebalances and recalibrations marked (events.csv).
#include <vector>

#include "report/figure.hpp"
#include "report/report_inputs.hpp"

namespace epsim::report {

std::vector<Figure> run_figures(const std::vector<RunInput>& runs);

/// The time series of one run: at most `max_bins` time bins per group and panel.
Figure run_time_series(const RunInput& run, std::size_t max_bins);

}  // namespace epsim::report
