// SPDX-License-Identifier: Apache-2.0
#include "workloads/think_time.hpp"

#include <array>
#include <boost/random/exponential_distribution.hpp>
#include <boost/random/lognormal_distribution.hpp>
#include <cmath>

namespace epsim::workloads {

double ThinkTime::sample_s(core::Rng& rng) const {
  switch (kind) {
    case Kind::fixed:
      return mean_s;
    case Kind::exponential:
      return boost::random::exponential_distribution<double>(1.0 / mean_s)(rng);
    case Kind::lognormal: {
      const double sigma2 = std::log1p(cv * cv);
      return boost::random::lognormal_distribution<double>(std::log(mean_s) - sigma2 / 2.0, std::sqrt(sigma2))(rng);
    }
  }
  return mean_s;
}

ThinkTime parse_think_time(core::ParamTable& t, double default_mean_s) {
  using Kind = ThinkTime::Kind;
  static constexpr std::array<core::Choice<Kind>, 3> kinds{
      {{"fixed", Kind::fixed}, {"exponential", Kind::exponential}, {"lognormal", Kind::lognormal}}};
  ThinkTime d;
  d.kind = t.choice<Kind>("distribution", Kind::exponential, "think-time distribution", kinds);
  // At most a day: a longer pause is a new session, and a mean past the simulated-time bound would
  // push every later turn out of the run.
  d.mean_s = t.real("mean_s", default_mean_s, "mean seconds (fixed: the value)", {0.0, 86400.0});
  d.cv = t.real("cv", 1.0, "coefficient of variation (lognormal)", {1e-3, 100.0});
  if (d.kind != Kind::fixed && d.mean_s <= 0.0) {
    t.fail("mean_s", "must be > 0 for an exponential or lognormal think time (use fixed for none)");
  }
  t.finish();
  return d;
}

}  // namespace epsim::workloads
