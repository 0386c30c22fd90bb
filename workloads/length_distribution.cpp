#include "workloads/length_distribution.hpp"

#include <algorithm>
#include <array>
#include <boost/random/lognormal_distribution.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <cmath>

namespace epsim::workloads {

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
  }
  return 0.0;
}

LengthDistribution parse_length_distribution(core::ParamTable& t, std::int64_t default_value) {
  static constexpr std::array<std::string_view, 3> kinds{"fixed", "uniform", "lognormal"};
  LengthDistribution d;
  const std::string kind = t.choice("distribution", "fixed", "length distribution", kinds);
  constexpr core::IntBounds len{1, 1 << 22};
  d.value = t.integer("value", default_value, "tokens (fixed)", len);
  d.min = t.integer("min", 1, "smallest length (uniform, lognormal clamp)", len);
  d.max = t.integer("max", 1 << 20, "largest length (uniform, lognormal clamp)", len);
  d.mean = t.real("mean", static_cast<double>(default_value), "mean length (lognormal)", core::k_positive);
  d.cv = t.real("cv", 1.0, "coefficient of variation (lognormal)", core::k_positive);
  if (kind == "uniform") {
    d.kind = LengthDistribution::Kind::uniform;
  } else if (kind == "lognormal") {
    d.kind = LengthDistribution::Kind::lognormal;
  }
  if (d.kind != LengthDistribution::Kind::fixed && d.min > d.max) {
    t.fail("min", "must be <= max (" + std::to_string(d.max) + ")");
  }
  t.finish();
  return d;
}

}  // namespace epsim::workloads
