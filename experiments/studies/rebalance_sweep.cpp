// SPDX-License-Identifier: Apache-2.0
#include "experiments/studies/rebalance_sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "core/error.hpp"

namespace epsim::experiments {
namespace {

constexpr std::string_view k_prefix = "study.rebalance.";

std::vector<std::int64_t> integers(const toml::table& t, std::string_view key, const std::string& source,
                                   std::int64_t low, bool ascending) {
  std::vector<std::int64_t> out;
  const toml::node* n = t.get(key);
  if (!n) {
    return out;
  }
  const std::string where = std::string(k_prefix) + std::string(key);
  const auto error = [&] {
    return core::ConfigError(source, where,
                             fmt::format("expected a non-empty list of at most {} integers >= {}{}",
                                         k_max_rebalance_levels, low, ascending ? " in ascending order" : ""));
  };
  const toml::array* a = n->as_array();
  if (!a || a->empty() || a->size() > k_max_rebalance_levels) {
    throw error();
  }
  for (const toml::node& v : *a) {
    const auto i = v.value_exact<std::int64_t>();
    if (!i || *i < low || *i > (std::int64_t{1} << 40) ||
        (!out.empty() && (ascending ? *i <= out.back() : std::count(out.begin(), out.end(), *i) > 0))) {
      throw error();
    }
    out.push_back(*i);
  }
  return out;
}

}  // namespace

RebalanceSweep parse_rebalance_sweep(const toml::table& study, const std::string& source) {
  const toml::node* n = study.get("rebalance");
  const toml::table* t = n ? n->as_table() : nullptr;
  if (!t) {
    throw core::ConfigError(source, "study.rebalance",
                            "a rebalance study needs a [study.rebalance] table: interval_steps = [...], migration = "
                            "[...], redundant_slots = [...] (optional)");
  }
  for (const auto& [k, v] : *t) {
    constexpr std::array<std::string_view, 5> known{"trigger", "interval_steps", "migration", "redundant_slots",
                                                    "options"};
    if (std::find(known.begin(), known.end(), k.str()) == known.end()) {
      throw core::ConfigError(source, std::string(k_prefix) + std::string(k.str()),
                              fmt::format("unknown key; valid keys are: {}", fmt::join(known, ", ")));
    }
  }
  RebalanceSweep s;
  if (const toml::node* trig = t->get("trigger")) {
    const auto name = trig->value_exact<std::string>();
    if (!name || name->empty() || *name == "none" || name->size() > 64) {
      throw core::ConfigError(source, std::string(k_prefix) + "trigger",
                              "expected the name of a rebalance trigger with interval_steps (periodic, director)");
    }
    s.trigger = *name;
  }
  s.intervals = integers(*t, "interval_steps", source, 1, true);
  if (s.intervals.empty()) {
    throw core::ConfigError(source, std::string(k_prefix) + "interval_steps",
                            "expected the intervals to sweep, steps between rebalances, e.g. [64, 256, 1024]");
  }
  s.slots = integers(*t, "redundant_slots", source, 0, false);
  if (const toml::node* m = t->get("migration")) {
    const toml::array* a = m->as_array();
    const auto error = [&] {
      return core::ConfigError(source, std::string(k_prefix) + "migration",
                               fmt::format("expected a non-empty list of distinct migration modes (stop_the_world, "
                                           "overlapped, compute_phases, layer_by_layer, chunked), at most {}",
                                           k_max_rebalance_levels));
    };
    if (!a || a->empty() || a->size() > k_max_rebalance_levels) {
      throw error();
    }
    for (const toml::node& v : *a) {
      const auto mode = v.value_exact<std::string>();
      if (!mode || mode->empty() || mode->size() > 64 || mode->find('/') != std::string::npos ||
          std::count(s.migrations.begin(), s.migrations.end(), *mode) > 0) {
        throw error();
      }
      s.migrations.push_back(*mode);
    }
  } else {
    s.migrations = {"stop_the_world"};
  }
  if (const toml::node* o = t->get("options")) {
    if (!o->is_table()) {
      throw core::ConfigError(source, std::string(k_prefix) + "options",
                              "expected a table of [policy.rebalance] options, e.g. { window_steps = 64 }");
    }
    s.options = *o->as_table();
    for (const std::string_view k : {"trigger", "interval_steps", "migration"}) {
      if (s.options.contains(k)) {
        throw core::ConfigError(source, std::string(k_prefix) + "options." + std::string(k),
                                "the sweep sets this one: give it as study.rebalance." + std::string(k));
      }
    }
  }
  return s;
}

std::vector<StudyAxis> rebalance_axes(const RebalanceSweep& sweep) {
  std::vector<StudyAxis> out;
  if (!sweep.slots.empty()) {
    StudyAxis slots{k_slots_axis, {}, {}};
    for (const std::int64_t n : sweep.slots) {
      toml::table parallel{{"redundant_experts", n}};
      slots.levels.push_back(
          AxisLevel{fmt::format("{}", n), toml::table{{"parallel", std::move(parallel)}}, {}, static_cast<double>(n)});
    }
    out.push_back(std::move(slots));
  }
  const auto level = [](toml::table rebalance) {
    toml::table policy;
    policy.insert_or_assign("rebalance", std::move(rebalance));
    toml::table root;
    root.insert_or_assign("policy", std::move(policy));
    return root;
  };
  StudyAxis schedule{k_schedule_axis, {}, {}};
  schedule.levels.push_back(AxisLevel{k_rebalance_off, level(toml::table{{"trigger", "none"}}), {}, std::nullopt});
  for (const std::string& mode : sweep.migrations) {
    for (const std::int64_t interval : sweep.intervals) {
      toml::table r = sweep.options;
      r.insert_or_assign("trigger", sweep.trigger);
      r.insert_or_assign("interval_steps", interval);
      r.insert_or_assign("migration", mode);
      schedule.levels.push_back(AxisLevel{fmt::format("{}/{}", mode, interval), level(std::move(r)), {}, std::nullopt});
    }
  }
  out.push_back(std::move(schedule));
  return out;
}

}  // namespace epsim::experiments
