// SPDX-License-Identifier: Apache-2.0
#include "core/lane_math.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>

#include "core/isa.hpp"

namespace lane = epsim::core::lane;

namespace {

// Distance in units in the last place between two positive or two negative doubles.
std::int64_t ulps(double a, double b) {
  const auto ia = std::bit_cast<std::int64_t>(a);
  const auto ib = std::bit_cast<std::int64_t>(b);
  return ia > ib ? ia - ib : ib - ia;
}

}  // namespace

TEST_CASE("lane log is within a few ulp of the exact log over the doubles the samplers feed it") {
  // A geometric sweep over 2^-60 .. 2^60 in steps of 0.073 % (~114,000 points: every mantissa range).
  std::int64_t worst = 0;
  double x = 0x1p-60;
  while (x < 0x1p60) {
    const double exact = static_cast<double>(std::log(static_cast<long double>(x)));
    const double got = lane::log_one(x);
    if (std::abs(exact) > 1e-300) {
      worst = std::max(worst, ulps(got, exact));
    } else {
      CHECK(std::abs(got) < 1e-15);
    }
    x *= 1.000731;
  }
  CHECK(worst <= 2);  // measured: 2
  CHECK(lane::log_one(1.0) == 0.0);
  CHECK(lane::log_one(0x1p-54) == Approx(-54.0 * std::log(2.0)).epsilon(1e-15));
}

TEST_CASE("lane exp is within a few ulp of the exact exp on the inversion's range") {
  std::int64_t worst = 0;
  for (int i = 0; i <= 87240; ++i) {
    const double x = -40.0 + 0.000917 * i;
    const double exact = static_cast<double>(std::exp(static_cast<long double>(x)));
    worst = std::max(worst, ulps(lane::exp_one(x), exact));
  }
  CHECK(worst <= 2);  // measured: 1
  CHECK(lane::exp_one(0.0) == 1.0);
}

TEST_CASE("lane log k! equals lgamma(k + 1) on the table, at its edge and on Stirling's side") {
  for (const double k : {0.0, 1.0, 2.0, 5.0, 17.0, 62.0, 63.0, 64.0, 65.0, 100.0, 1e3, 12345.0, 1e6, 3e9, 1e15}) {
    const double exact = static_cast<double>(std::lgamma(static_cast<long double>(k) + 1.0L));
    const double got = lane::log_factorial_one(k);
    INFO("k = " << k);
    CHECK(std::abs(got - exact) <= 1e-14 * std::max(1.0, std::abs(exact)));
  }
}

TEST_CASE("lane floor is floor, on both sides of zero and past 2^52") {
  for (const double x :
       {-3.5, -3.0, -0.2, -0.0, 0.0, 0.7, 2.0, 2.9999999, 1e15 + 0.5, 0x1p53, -0x1p60, 4503599627370495.5}) {
    INFO("x = " << x);
    CHECK(lane::floor_one(x) == std::floor(x));
  }
}

TEST_CASE("instruction sets have names, the baseline always runs, EPSIM_ISA names a supported one") {
  using epsim::core::Isa;
  for (const Isa isa : epsim::core::k_all_isas) {
    CHECK(epsim::core::parse_isa(epsim::core::isa_name(isa)) == isa);
  }
  CHECK_FALSE(epsim::core::parse_isa("sse9").has_value());
  CHECK(epsim::core::isa_supported(Isa::baseline));
  CHECK(epsim::core::isa_supported(epsim::core::active_isa()));
}
