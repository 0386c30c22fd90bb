// SPDX-License-Identifier: Apache-2.0
#pragma once
// What stopped a max-rate search: the configured caps (sim/admission_caps.hpp) at its first probe that
// missed the target. A search whose first miss has its queue held back by the seats measured the seat
// cap, not the hardware (the shipped what-if at 16 seats per rank: docs/studies.md).
#include <string>
#include <vector>

#include "experiments/assembly/run_metrics.hpp"
#include "experiments/studies/slo_search.hpp"
#include "experiments/studies/study_journal.hpp"
#include "experiments/studies/study_plan.hpp"

namespace epsim::experiments {

/// The caps of the lowest-rate probe whose attainment missed `target` (none missed: the highest
/// probe's); an empty tally without probes.
serving::CapTally caps_at_first_miss(const SloSearchResult& r, double target);

/// Appends "max_rate_limits.<cap>.binding_fraction" for each cap of `caps`.
void append_probe_limits(const serving::CapTally& caps, NamedValues& out);

/// The terminal table's note: each point whose mean binding fraction of a cap (at the offered load, or
/// at its max-rate search's first miss) reaches k_cap_binding_threshold; "" when none does.
std::string study_limits_text(const StudyPlan& plan, const std::vector<RunRecord>& records);

}  // namespace epsim::experiments
