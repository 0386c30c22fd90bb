// SPDX-License-Identifier: Apache-2.0
#pragma once
// The axes of a study file ([[axis]]: a config key with values, named levels of overrides, or policy
// bundles; zipped axes), parsed and bounded: at most k_max_study_points points, labels of bounded printable
// text (docs/studies.md).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "experiments/studies/study_reader.hpp"

namespace epsim::experiments {

/// The most points a study may have (the product of its axes' sizes, checked before anything is
/// allocated): every point's configuration is loaded and validated before the first run.
inline constexpr std::int64_t k_max_study_points = 10000;
/// The longest axis name, label or key, in bytes.
inline constexpr std::size_t k_max_study_text_bytes = 256;

/// One level of an axis: its label in the outputs, and the overrides it applies.
struct AxisLevel {
  std::string label;
  toml::table overrides;
  std::string policy_bundle;    ///< a policy bundle (overrides resolved per point: they depend on its EP size)
  std::optional<double> value;  ///< a number axis's value (constraints and objectives may name the axis)
};

struct StudyAxis {
  std::string name;  ///< column name in the outputs (the key for a key axis)
  std::vector<AxisLevel> levels;
  std::string zip_with;  ///< varies together with this earlier axis (same length) instead of a product
};

/// The [[axis]] tables of a study file, checked together: unique names, zip partners earlier and of equal
/// length, and the point count.
std::vector<StudyAxis> parse_axes(StudyReader& rd, const toml::table& file);
/// Fails unless the product of the sizes of the axes that are not zipped is at most k_max_study_points.
void check_point_count(StudyReader& rd, const std::vector<StudyAxis>& axes);
/// Labels and names become CSV cells, table rows and report text: printable, of a bounded length.
void check_label(StudyReader& rd, const std::string& where, const std::string& text);

}  // namespace epsim::experiments
