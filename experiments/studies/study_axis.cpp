// SPDX-License-Identifier: Apache-2.0
#include "experiments/studies/study_axis.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/error.hpp"
#include "core/message_text.hpp"
#include "core/toml_guard.hpp"
#include "policies/policy_bundles.hpp"
#include "policies/rebalance_config.hpp"

namespace epsim::experiments {
namespace {

// "a.b.c" = v as the nested table {a = {b = {c = v}}}.
toml::table override_table(const std::string& dotted, const toml::node& value) {
  std::vector<std::string> parts;
  std::size_t pos = 0;
  while (true) {
    const std::size_t dot = dotted.find('.', pos);
    parts.push_back(dotted.substr(pos, dot - pos));
    if (dot == std::string::npos) {
      break;
    }
    pos = dot + 1;
  }
  toml::table root;
  toml::table* at = &root;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    at = at->insert_or_assign(parts[i], toml::table{}).first->second.as_table();
  }
  value.visit([&](const auto& v) { at->insert_or_assign(parts.back(), v); });
  return root;
}

std::string label_of(const toml::node& v) {
  if (const auto s = v.value_exact<std::string>()) {
    return *s;
  }
  if (const auto i = v.value_exact<std::int64_t>()) {
    return fmt::format("{}", *i);
  }
  if (const auto d = v.value_exact<double>()) {
    return fmt::format("{}", *d);
  }
  if (const auto b = v.value_exact<bool>()) {
    return *b ? "true" : "false";
  }
  throw core::Error("a value of an axis must be a string, a number or a boolean (give tables as levels)");
}

// A config key as an axis sets it: dotted parts, each non-empty, no deeper than a config key can be
// (a 60,000-level key would otherwise become 60,000 nested tables, and toml++ recurses over them).
void check_axis_key(StudyReader& rd, const std::string& where, const std::string& key) {
  const auto levels = std::count(key.begin(), key.end(), '.') + 1;
  if (levels > core::k_max_toml_key_depth) {
    rd.fail(where, fmt::format("\"{}\": a config key nests at most {} levels deep, this one {}",
                               core::terminal_safe(core::excerpt(key)), core::k_max_toml_key_depth, levels));
  }
  if (key.size() > k_max_study_text_bytes || core::has_control_characters(key) || key.empty() || key.front() == '.' ||
      key.back() == '.' || key.find("..") != std::string::npos) {
    rd.fail(where, fmt::format("\"{}\": expected a dotted config key such as \"workload.rate_rps\" (printable, at "
                               "most {} bytes)",
                               core::terminal_safe(core::excerpt(key)), k_max_study_text_bytes));
  }
}

StudyAxis parse_axis(StudyReader& rd, const toml::table& t, std::size_t i) {
  const std::string prefix = fmt::format("axis[{}].", i);
  rd.only(t, prefix, {"key", "name", "values", "labels", "levels", "policies", "zip_with"});
  StudyAxis axis;
  const auto key = rd.get<std::string>(t, prefix, "key", "a config key such as \"workload.rate_rps\"");
  axis.name = rd.get<std::string>(t, prefix, "name", "a string").value_or(key.value_or(""));
  axis.zip_with = rd.get<std::string>(t, prefix, "zip_with", "the name of an earlier axis").value_or("");
  const int forms = (t.contains("values") ? 1 : 0) + (t.contains("levels") ? 1 : 0) + (t.contains("policies") ? 1 : 0);
  if (forms != 1) {
    rd.fail(prefix + "values",
            "an axis has exactly one of: values (with key), levels (named bundles of overrides), policies (policy "
            "bundles)");
  }
  if (t.contains("values") && !key.has_value()) {
    rd.fail(prefix + "key", "an axis of values needs the config key they set");
  }
  if (key) {
    check_axis_key(rd, prefix + "key", *key);
  }
  if (axis.name.empty()) {
    rd.fail(prefix + "name", "an axis of levels or policies needs a name (its column in the outputs)");
  }
  if (t.contains("values")) {
    const toml::array* values = t.get("values")->as_array();
    if (!values || values->empty()) {
      rd.fail(prefix + "values", "expected a non-empty list of values");
    }
    const std::vector<std::string> labels = rd.strings(t, prefix, "labels");
    if (!labels.empty() && labels.size() != values->size()) {
      rd.fail(prefix + "labels", fmt::format("expected {} labels, one per value", values->size()));
    }
    for (std::size_t v = 0; v < values->size(); ++v) {
      const toml::node& value = *values->get(v);
      if (!value.is_value()) {
        rd.fail(prefix + "values", "values must be strings, numbers or booleans (give tables as levels)");
      }
      toml::table overrides = override_table(key.value_or(""), value);
      policies::expand_rebalance_shorthand(overrides);
      AxisLevel level{labels.empty() ? label_of(value) : labels[v], std::move(overrides), {}, std::nullopt};
      if (const auto number = value.value<double>(); number && !value.is_boolean()) {
        level.value = *number;
      }
      axis.levels.push_back(std::move(level));
    }
  } else if (t.contains("policies")) {
    for (const std::string& name : rd.strings(t, prefix, "policies")) {
      try {
        (void)policies::policy_bundle(name);
      } catch (const core::Error& e) {
        rd.fail(prefix + "policies", e.what());
      }
      axis.levels.push_back(AxisLevel{name, {}, name, std::nullopt});
    }
  } else {
    const toml::array* levels = t.get("levels")->as_array();
    if (!levels || levels->empty()) {
      rd.fail(prefix + "levels", "expected a non-empty list of { label = \"...\", set = { key = value, ... } }");
    }
    for (std::size_t l = 0; l < levels->size(); ++l) {
      const std::string lp = fmt::format("{}levels[{}].", prefix, l);
      const toml::table* level = levels->get(l)->as_table();
      if (!level) {
        rd.fail(lp, "expected { label = \"...\", set = { key = value, ... } }");
      }
      rd.only(*level, lp, {"label", "set", "policy"});
      AxisLevel out;
      out.label = rd.get<std::string>(*level, lp, "label", "a string").value_or("");
      if (out.label.empty()) {
        rd.fail(lp + "label", "every level needs a label (its value in the outputs)");
      }
      if (const toml::node* set = level->get("set")) {
        if (!set->is_table()) {
          rd.fail(lp + "set", "expected a table of overrides, e.g. { cluster.nodes = 2, parallel.ep_size = 16 }");
        }
        out.overrides = *set->as_table();
        policies::expand_rebalance_shorthand(out.overrides);
      }
      out.policy_bundle = rd.get<std::string>(*level, lp, "policy", "a policy bundle name").value_or("");
      if (!out.policy_bundle.empty()) {
        try {
          (void)policies::policy_bundle(out.policy_bundle);
        } catch (const core::Error& e) {
          rd.fail(lp + "policy", e.what());
        }
      }
      axis.levels.push_back(std::move(out));
    }
  }
  check_label(rd, prefix + "name", axis.name);
  for (const AxisLevel& l : axis.levels) {
    check_label(rd, prefix + "labels", l.label);
  }
  std::set<std::string> seen;
  for (const AxisLevel& l : axis.levels) {
    if (!seen.insert(l.label).second) {
      rd.fail(prefix + "values", fmt::format("label \"{}\" appears twice: labels name levels in the outputs", l.label));
    }
  }
  return axis;
}

}  // namespace

// Labels and names become CSV cells, table rows and report text: printable, of a bounded length.
void check_label(StudyReader& rd, const std::string& where, const std::string& text) {
  if (core::has_control_characters(text) || text.size() > k_max_study_text_bytes) {
    rd.fail(where, fmt::format("\"{}\": expected printable text of at most {} bytes (no control characters or "
                               "terminal escapes)",
                               core::terminal_safe(core::excerpt(text)), k_max_study_text_bytes));
  }
}

// The product of the sizes of the axes that are not zipped, checked for overflow and against the bound
// before any point is made (64 two-level axes wrapped to 0 points; 32 ended in bad_alloc).
void check_point_count(StudyReader& rd, const std::vector<StudyAxis>& axes) {
  std::int64_t points = 1;
  for (const StudyAxis& a : axes) {
    if (!a.zip_with.empty()) {
      continue;
    }
    const auto n = static_cast<std::int64_t>(a.levels.size());
    if (points > k_max_study_points / n) {
      rd.fail("axis", fmt::format("the axes make more than {} points (the product of their sizes); split the study "
                                  "or zip axes that vary together",
                                  k_max_study_points));
    }
    points *= n;
  }
}

// The [[axis]] tables, checked together: unique names, zip partners earlier and of equal length.
std::vector<StudyAxis> parse_axes(StudyReader& rd, const toml::table& file) {
  std::vector<StudyAxis> axes;
  if (const toml::node* node = file.get("axis")) {
    const toml::array* a = node->as_array();
    if (!a) {
      rd.fail("axis", "expected [[axis]] tables");
    }
    for (std::size_t i = 0; i < a->size(); ++i) {
      const toml::table* t = a->get(i)->as_table();
      if (!t) {
        rd.fail(fmt::format("axis[{}]", i), "expected a table");
      }
      axes.push_back(parse_axis(rd, *t, i));
    }
  }
  std::set<std::string> names;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const StudyAxis& axis = axes[i];
    if (!names.insert(axis.name).second) {
      rd.fail(fmt::format("axis[{}].name", i), fmt::format("two axes are named \"{}\"", axis.name));
    }
    if (!axis.zip_with.empty()) {
      const auto with = std::find_if(axes.begin(), axes.begin() + static_cast<std::ptrdiff_t>(i),
                                     [&](const StudyAxis& o) { return o.name == axis.zip_with; });
      if (with == axes.begin() + static_cast<std::ptrdiff_t>(i) || !with->zip_with.empty()) {
        rd.fail(fmt::format("axis[{}].zip_with", i),
                fmt::format("\"{}\" is not an earlier axis of the product (zip with the first of a zipped set)",
                            axis.zip_with));
      }
      if (with->levels.size() != axis.levels.size()) {
        rd.fail(fmt::format("axis[{}].zip_with", i),
                fmt::format("zipped axes need the same number of levels: \"{}\" has {}, \"{}\" has {}", with->name,
                            with->levels.size(), axis.name, axis.levels.size()));
      }
    }
  }
  check_point_count(rd, axes);
  return axes;
}

}  // namespace epsim::experiments
