// SPDX-License-Identifier: Apache-2.0
#pragma once
// log, exp and log k! on 2, 4 or 8 doubles at once, written with GCC's vector extensions and only
// IEEE-exact element operations (+, -, *, /, compares, bit moves): a lane computes the same bits whatever
// the width and whatever instruction set the caller is compiled for (AVX-512, AVX2 or the x86-64
// baseline), so kernels may pick the width that suits the machine. (libm's log and exp differ between its
// own FMA and non-FMA paths, so the vector kernels cannot use them.) Accuracy is a few ulp, like libm's;
// the series are textbook ones (atanh for log, Taylor for exp on |r| <= ln 2 / 2, Stirling for log k!),
// in Horner form. Callers compile with -ffp-contract=off so that no multiply-add is fused differently on
// different paths, and -Wno-psabi: the functions are always inlined, so no vector crosses a call between
// code built for different sets.
#include <bit>
#include <cstdint>

namespace epsim::core::lane {

using Vd2 = double __attribute__((vector_size(16)));
using Vd4 = double __attribute__((vector_size(32)));
using Vd8 = double __attribute__((vector_size(64)));
using Vi2 = std::int64_t __attribute__((vector_size(16)));
using Vi4 = std::int64_t __attribute__((vector_size(32)));
using Vi8 = std::int64_t __attribute__((vector_size(64)));
using Vu2 = std::uint64_t __attribute__((vector_size(16)));
using Vu4 = std::uint64_t __attribute__((vector_size(32)));
using Vu8 = std::uint64_t __attribute__((vector_size(64)));

/// The integer vectors and width of a double vector (GCC drops vector_size on dependent types, so the
/// widths are spelled out).
template <class D>
struct Lanes;
template <>
struct Lanes<Vd2> {
  using I = Vi2;
  using U = Vu2;
  static constexpr int width = 2;
};
template <>
struct Lanes<Vd4> {
  using I = Vi4;
  using U = Vu4;
  static constexpr int width = 4;
};
template <>
struct Lanes<Vd8> {
  using I = Vi8;
  using U = Vu8;
  static constexpr int width = 8;
};
template <class D>
using IntOf = typename Lanes<D>::I;

inline constexpr double k_ln2_hi = 0x1.62e42fee00000p-1;   // ln 2 to 32 bits: e * hi is exact for |e| < 2^21
inline constexpr double k_ln2_lo = 0x1.a39ef35793c76p-33;  // ln 2 - hi
inline constexpr double k_sqrt2 = 0x1.6a09e667f3bcdp+0;
inline constexpr double k_half_log_2pi = 0.9189385332046728;  // log(2 pi) / 2

template <class D>
[[gnu::always_inline]] inline D splat(double x) {
  return D{} + x;
}
// Conversions go through the 2^52 trick instead of int64 <-> double instructions, which AVX2 and the
// baseline lack (the compiler would fall back to one lane at a time): a double in [2^52, 2^53) holds the
// integer n as 2^52 + n in its mantissa bits.
inline constexpr std::int64_t k_two52_bits = 0x4330000000000000;
/// Integer-valued doubles in [0, 2^52) as integers.
template <class D>
[[gnu::always_inline]] inline IntOf<D> small_int(D n) {
  return std::bit_cast<IntOf<D>>(n + 0x1p52) - k_two52_bits;
}
/// Integers in [0, 2^52) as doubles.
template <class D>
[[gnu::always_inline]] inline D small_double(IntOf<D> n) {
  return std::bit_cast<D>(n | k_two52_bits) - 0x1p52;
}
template <class D>
[[gnu::always_inline]] inline D abs(D x) {
  return x < 0.0 ? -x : x;
}
/// floor(x) for every finite x.
template <class D>
[[gnu::always_inline]] inline D floor(D x) {
  const D a = abs(x);
  const D near = a < 0x1p52 ? (a + 0x1p52) - 0x1p52 : a;  // |x| rounded to nearest; exact from 2^52 up
  const D r = x < 0.0 ? -near : near;
  return r > x ? r - 1.0 : r;
}

/// Natural log of positive normal doubles (V in (0, 1), sums of positive terms): no zero, infinity or NaN.
template <class D>
[[gnu::always_inline]] inline D log(D x) {
  using I = IntOf<D>;
  const I bits = std::bit_cast<I>(x);
  D e = small_double<D>((bits >> 52) & 0x7ff) - 1023.0;
  D m = std::bit_cast<D>((bits & 0x000fffffffffffff) | 0x3ff0000000000000);  // [1, 2)
  const I big = m > k_sqrt2;                                                 // fold m into [sqrt(1/2), sqrt(2))
  m = big != 0 ? m * 0.5 : m;
  e = big != 0 ? e + 1.0 : e;
  // log m = 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...), s = (m - 1) / (m + 1), |s| <= 0.1716: 12 terms
  // leave < 1e-18 relative.
  const D s = (m - 1.0) / (m + 1.0);
  const D z = s * s;
  D p = splat<D>(1.0 / 23.0);
  p = p * z + 1.0 / 21.0;
  p = p * z + 1.0 / 19.0;
  p = p * z + 1.0 / 17.0;
  p = p * z + 1.0 / 15.0;
  p = p * z + 1.0 / 13.0;
  p = p * z + 1.0 / 11.0;
  p = p * z + 1.0 / 9.0;
  p = p * z + 1.0 / 7.0;
  p = p * z + 1.0 / 5.0;
  p = p * z + 1.0 / 3.0;
  const D log_m = 2.0 * s + 2.0 * s * (z * p);
  return e * k_ln2_hi + (log_m + e * k_ln2_lo);
}

/// e^x for x in [-700, 700].
template <class D>
[[gnu::always_inline]] inline D exp(D x) {
  const D k = floor(x * 1.4426950408889634 + 0.5);  // nearest integer to x / ln 2
  const D r = (x - k * k_ln2_hi) - k * k_ln2_lo;    // |r| <= ln 2 / 2
  // Taylor to r^14 / 14!: the rest is < 2e-18 relative on |r| <= 0.347.
  D p = splat<D>(1.0 / 87178291200.0);  // 1 / 14!
  p = p * r + 1.0 / 6227020800.0;
  p = p * r + 1.0 / 479001600.0;
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  const D scale = std::bit_cast<D>(small_int(k + 1023.0) << 52);
  return p * scale;
}

inline constexpr int k_factorial_table = 64;

/// log k! for k < k_factorial_table, summed once with lane::log (the same table on every path).
const double* log_factorial_table();

/// log k! for integer-valued k >= 0: the table below 64, Stirling's series from there (the first omitted
/// term, 1/(1188 x^9), is below 1e-19).
template <class D>
[[gnu::always_inline]] inline D log_factorial(D k, const double* table) {
  using I = IntOf<D>;
  const D x = k + 1.0;
  const D ix = 1.0 / x;
  const D ix2 = ix * ix;
  D c = splat<D>(-1.0 / 1680.0);
  c = c * ix2 + 1.0 / 1260.0;
  c = c * ix2 - 1.0 / 360.0;
  c = c * ix2 + 1.0 / 12.0;
  const D stirling = (x - 0.5) * log(x) - x + k_half_log_2pi + c * ix;
  const I small = k < static_cast<double>(k_factorial_table);
  const I index = small_int(small != 0 ? k : 0.0);
  D tabled;
  for (int j = 0; j < Lanes<D>::width; ++j) {
    tabled[j] = table[index[j]];
  }
  return small != 0 ? tabled : stirling;
}

/// One lane of each function, out of line (the tests; the table).
double log_one(double x);
double exp_one(double x);
double log_factorial_one(double k);
double floor_one(double x);

}  // namespace epsim::core::lane
