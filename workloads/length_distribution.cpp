// SPDX-License-Identifier: Apache-2.0
#include "workloads/length_distribution.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>
#include <algorithm>
#include <array>
#include <boost/random/lognormal_distribution.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <cmath>
#include <numeric>
#include <span>

#include "core/presets.hpp"
#include "workloads/request.hpp"

namespace epsim::workloads {

std::span<const core::EmbeddedFile> embedded_lengths();

namespace {
const core::PresetCatalog& tables() {
  static const core::PresetCatalog catalog("length tables", embedded_lengths());
  return catalog;
}
}  // namespace

std::vector<std::string> length_table_names() {
  return tables().names();
}

std::int64_t LengthDistribution::sample(core::Rng& rng) const {
  switch (kind) {
    case Kind::fixed:
      return value;
    case Kind::uniform:
      return boost::random::uniform_int_distribution<std::int64_t>(min, max)(rng);
    case Kind::lognormal: {
      const double sigma2 = std::log1p(cv * cv);
      const double mu = std::log(mean) - sigma2 / 2.0;
      const double x = boost::random::lognormal_distribution<double>(mu, std::sqrt(sigma2))(rng);
      return std::clamp(static_cast<std::int64_t>(std::llround(x)), min, max);
    }
    case Kind::empirical:
      return values[boost::random::uniform_int_distribution<std::size_t>(0, values.size() - 1)(rng)];
  }
  return value;
}

double LengthDistribution::expected() const {
  switch (kind) {
    case Kind::fixed:
      return static_cast<double>(value);
    case Kind::uniform:
      return (static_cast<double>(min) + static_cast<double>(max)) / 2.0;
    case Kind::lognormal:
      return mean;
    case Kind::empirical:
      return static_cast<double>(std::accumulate(values.begin(), values.end(), std::int64_t{0})) /
             static_cast<double>(values.size());
  }
  return 0.0;
}

std::int64_t LengthDistribution::largest() const {
  switch (kind) {
    case Kind::fixed:
      return value;
    case Kind::uniform:
    case Kind::lognormal:
      return max;
    case Kind::empirical:
      return values.empty() ? 0 : *std::max_element(values.begin(), values.end());
  }
  return 0;
}

LengthDistribution parse_length_distribution(core::ParamTable& t, std::int64_t default_value, std::string_view unit) {
  using Kind = LengthDistribution::Kind;
  static constexpr std::array<core::Choice<Kind>, 4> kinds{{{"fixed", Kind::fixed},
                                                            {"uniform", Kind::uniform},
                                                            {"lognormal", Kind::lognormal},
                                                            {"empirical", Kind::empirical}}};
  LengthDistribution d;
  d.kind = t.choice<Kind>("distribution", Kind::fixed, "length distribution", kinds);
  constexpr core::IntBounds len{1, k_max_request_tokens};
  d.value = t.integer("value", default_value, fmt::format("{} (fixed)", unit), len);
  d.min = t.integer("min", 1, "smallest length (uniform, lognormal clamp)", len);
  d.max = t.integer("max", 1 << 20, "largest length (uniform, lognormal clamp)", len);
  d.mean = t.real("mean", static_cast<double>(default_value), "mean length (lognormal)", core::k_positive);
  d.cv = t.real("cv", 1.0, "coefficient of variation (lognormal)", core::k_positive);
  const std::string table = t.string("table", "", "empirical: a shipped table (sharegpt-prompt, sharegpt-output)");
  const std::vector<double> inline_values =
      t.real_list("values", "empirical: lengths sampled with replacement", {1.0, 1 << 22});
  if (d.kind == Kind::empirical) {
    std::vector<double> src = inline_values;
    if (!table.empty()) {
      const core::ParamLayer layer = core::preset_layer(t, "table", tables(), table);
      for (const auto& node : *layer.table->get_as<toml::array>("values")) {
        src.push_back(node.value_or(0.0));
      }
    }
    if (src.empty()) {
      t.fail("values", "an empirical distribution needs values or a table");
    }
    for (const double v : src) {
      if (v != std::floor(v)) {
        t.fail("values", "lengths must be whole numbers of tokens");
      }
      d.values.push_back(static_cast<std::int64_t>(v));
    }
  }
  if (d.kind != LengthDistribution::Kind::fixed && d.min > d.max) {
    t.fail("min", "must be <= max (" + std::to_string(d.max) + ")");
  }
  t.finish();
  return d;
}

}  // namespace epsim::workloads
