// SPDX-License-Identifier: Apache-2.0
#include "core/lane_math.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>

#include "core/isa.hpp"
#include "core/lane_random.hpp"

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

TEST_CASE("counter uniforms are uniform, and the U and V of one round are uncorrelated") {
  // 400,000 uniforms at counters 2r and 2r + 1 of 200,000 lanes' rounds (the pairs PTRS takes).
  std::vector<double> bins(100, 0.0);
  double sum_uv = 0.0;
  double sum_u = 0.0;
  double sum_v = 0.0;
  const int pairs = 200000;
  for (int i = 0; i < pairs; i += 2) {
    epsim::core::lane::Vu2 base;
    base[0] = (static_cast<std::uint64_t>(i) << 32);
    base[1] = (static_cast<std::uint64_t>(i + 1) << 32) + 6;  // another lane, its round 3
    const auto u = lane::uniforms_at<lane::Vd2>(0x1234567887654321ULL, base);
    const auto v = lane::uniforms_at<lane::Vd2>(0x1234567887654321ULL, base + 1);
    for (int j = 0; j < 2; ++j) {
      REQUIRE(u[j] > 0.0);
      REQUIRE(u[j] < 1.0);
      bins[static_cast<std::size_t>(u[j] * 100.0)] += 1.0;
      bins[static_cast<std::size_t>(v[j] * 100.0)] += 1.0;
      sum_uv += u[j] * v[j];
      sum_u += u[j];
      sum_v += v[j];
    }
  }
  // Chi-square on 100 bins, 99 degrees of freedom: 1e-4 upper quantile ~ 154.
  double x2 = 0.0;
  const double expected = 2.0 * pairs / 100.0;
  for (const double b : bins) {
    x2 += (b - expected) * (b - expected) / expected;
  }
  CHECK(x2 < 154.0);
  // Correlation of U and V: standard error 1 / sqrt(pairs).
  const double n = pairs;
  const double cov = sum_uv / n - (sum_u / n) * (sum_v / n);
  CHECK(std::abs(cov / (1.0 / 12.0)) < 4.5 / std::sqrt(n));
}
