// SPDX-License-Identifier: Apache-2.0
#pragma once
// A study (`epsim sweep STUDY.toml`): a base experiment, axes whose levels override it (a config key
// with a list of values, named bundles of several overrides, or the policy bundles), replications
// with their seed families, and what to derive: a baseline for paired differences, the max sustainable
// rate, an objective to rank points. docs/studies.md documents the file.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "experiments/assembly/replication.hpp"
#include "experiments/studies/rebalance_sweep.hpp"
#include "experiments/studies/slo_search.hpp"
#include "experiments/studies/study_axis.hpp"

namespace epsim::experiments {

enum class StudyKind : std::uint8_t {
  grid,        ///< no defaults beyond the grid itself
  whatif,      ///< setups as bundles: scaling curves vs GPUs / EP size, per-GPU figures
  montecarlo,  ///< cluster draws x policies: distributions and recovery vs a baseline
  compare,     ///< policies x a common rate grid: attainment vs rate, max sustainable rate
  rebalance,   ///< rebalancing off vs interval x migration mode x redundant slots: is it worth it?
};

/// The most runs (points x replications): each has a journal key computed up front.
inline constexpr std::int64_t k_max_study_runs = 1000000;

/// A constraint of the objective: metric (mean over replications) compared with a bound. The metric
/// may name an axis of numbers: its value at the point.
struct ObjectiveConstraint {
  std::string metric;
  bool at_least = true;  ///< >= (else <=)
  double bound = 0.0;
};

struct StudyObjective {
  std::string metric;
  bool maximize = true;
  std::vector<ObjectiveConstraint> subject_to;
};

struct StudySpec {
  std::string source;  ///< the study file
  std::string name;    ///< its stem
  StudyKind kind = StudyKind::grid;
  toml::table base;         ///< the base experiment's TOML
  std::string base_source;  ///< where it came from (a path, or "<study> [base]")
  std::vector<StudyAxis> axes;
  std::int64_t replications = 1;
  VariedFamilies vary;
  bool common_random_numbers = true;                            ///< replication r uses the same seeds at every point
  std::optional<std::pair<std::string, std::string>> baseline;  ///< axis name, level label
  std::optional<SloSearchOptions> max_rate;                     ///< max sustainable rate of every run, as a metric
  std::string rate_axis;    ///< compare: the axis whose levels are arrival rates (attainment-vs-rate curves)
  double slo_target = 0.9;  ///< compare: the attainment the max rate from the rate grid must keep
  std::optional<StudyObjective> objective;
  std::vector<std::string> report;          ///< metrics of the printed table
  bool save_runs = false;                   ///< write each run's summary.json under DIR/runs/
  std::optional<RebalanceSweep> rebalance;  ///< rebalance: the sweep its last axes came from
};

/// Loads and checks a study file; errors name the file, the key and what was expected.
StudySpec load_study(const std::string& path);
StudySpec load_study_text(std::string_view text, const std::string& source, const std::string& dir);

std::string_view study_kind_name(StudyKind k);

}  // namespace epsim::experiments
