// Student-t intervals against textbook table values and hand calculations.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "core/confidence.hpp"

using namespace epsim::core;

TEST_CASE("Student-t quantiles match the printed table") {
  // Two-sided 95 %: t(0.975; dof) from a statistics table (to 4 decimals, e.g. NIST/SEMATECH 1.3.6.7.2).
  REQUIRE(student_t_quantile(0.95, 1) == Approx(12.7062).epsilon(1e-4));
  REQUIRE(student_t_quantile(0.95, 2) == Approx(4.3027).epsilon(1e-4));
  REQUIRE(student_t_quantile(0.95, 4) == Approx(2.7764).epsilon(1e-4));
  REQUIRE(student_t_quantile(0.95, 7) == Approx(2.3646).epsilon(1e-4));
  REQUIRE(student_t_quantile(0.95, 29) == Approx(2.0452).epsilon(1e-4));
  REQUIRE(student_t_quantile(0.99, 10) == Approx(3.1693).epsilon(1e-4));
  REQUIRE(student_t_quantile(0.95, 100000) == Approx(1.95996).epsilon(1e-4));
  REQUIRE_THROWS(student_t_quantile(0.95, 0));
}

TEST_CASE("a sample's mean, standard deviation and 95 % interval by hand") {
  const std::vector<double> x{2, 4, 4, 4, 5, 5, 7, 9};
  const SampleSummary s = summarize_sample(x);
  REQUIRE(s.n == 8);
  REQUIRE(s.mean == Approx(5.0));
  // Squared deviations sum to 32: s = sqrt(32 / 7) = 2.13809; half-width 2.36462 * 2.13809 / sqrt(8).
  REQUIRE(s.stddev == Approx(2.13809).epsilon(1e-5));
  REQUIRE(s.half_width() == Approx(1.78749).epsilon(1e-4));
  REQUIRE(s.ci_low == Approx(5.0 - 1.78749).epsilon(1e-4));
  REQUIRE(s.ci_high == Approx(5.0 + 1.78749).epsilon(1e-4));

  const std::vector<double> one{3.5};
  const SampleSummary o = summarize_sample(one);
  REQUIRE(o.n == 1);
  REQUIRE(o.mean == 3.5);
  REQUIRE(std::isnan(o.stddev));
  REQUIRE(std::isnan(o.ci_low));
  REQUIRE(summarize_sample(std::vector<double>{}).n == 0);
}

TEST_CASE("paired differences: the interval of the differences, tighter than the two samples'") {
  // Replications share their noise (common random numbers): x = base + {1, 2, 1}.
  const std::vector<double> base{9, 20, 10};
  const std::vector<double> x{10, 22, 11};
  const SampleSummary d = summarize_paired_difference(x, base);
  REQUIRE(d.n == 3);
  REQUIRE(d.mean == Approx(4.0 / 3.0));
  // s = sqrt(1 / 3); half-width = 4.30265 * 0.57735 / sqrt(3) = 1.43422.
  REQUIRE(d.stddev == Approx(std::sqrt(1.0 / 3.0)));
  REQUIRE(d.half_width() == Approx(1.43422).epsilon(1e-4));
  // Unpaired, the spread between replications (9..22) would swamp the difference.
  REQUIRE(summarize_sample(x).half_width() > 10.0 * d.half_width());
  REQUIRE_THROWS(summarize_paired_difference(x, std::vector<double>{1.0}));
}
