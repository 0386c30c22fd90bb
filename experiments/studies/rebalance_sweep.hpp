// SPDX-License-Identifier: Apache-2.0
#pragma once
// A `rebalance` study's sweep ([study.rebalance]): is re-placing experts during serving worth it? The
// study runs every point with rebalancing off and at each interval x migration mode (x redundant slots),
// and reports throughput, TPOT and the break-even interval against "off" (rebalance_report.hpp).
// docs/studies.md documents the table.
#include <cstdint>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "experiments/studies/study_axis.hpp"

namespace epsim::experiments {

/// The label of the schedule level without rebalancing (the study's baseline).
inline constexpr const char* k_rebalance_off = "off";
/// The axis of schedules ("off", then "MODE/INTERVAL" for every mode and interval).
inline constexpr const char* k_schedule_axis = "schedule";
/// The axis of redundant slots (parallel.redundant_experts), when [study.rebalance] sweeps them.
inline constexpr const char* k_slots_axis = "redundant_slots";
/// The most intervals, modes or slot counts one sweep lists.
inline constexpr std::size_t k_max_rebalance_levels = 64;

struct RebalanceSweep {
  std::string trigger = "periodic";     ///< the trigger every rebalancing point runs
  std::vector<std::int64_t> intervals;  ///< interval_steps, ascending
  std::vector<std::string> migrations;  ///< [policy.rebalance] migration modes
  std::vector<std::int64_t> slots;      ///< parallel.redundant_experts (empty: the base's)
  toml::table options;                  ///< more [policy.rebalance] options of every rebalancing point

  /// The schedule level `level` (0: off): its mode and interval.
  std::string migration_of(std::size_t level) const { return migrations[(level - 1) / intervals.size()]; }
  std::int64_t interval_of(std::size_t level) const { return intervals[(level - 1) % intervals.size()]; }
};

/// Reads [study.rebalance] of `study` (errors name `source` and the key).
RebalanceSweep parse_rebalance_sweep(const toml::table& study, const std::string& source);

/// The axes the sweep adds after the file's: `redundant_slots` (when it lists slots), then `schedule`:
/// "off" (trigger none), then per mode, per interval.
std::vector<StudyAxis> rebalance_axes(const RebalanceSweep& sweep);

}  // namespace epsim::experiments
