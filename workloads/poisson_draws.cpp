// SPDX-License-Identifier: Apache-2.0
#include "workloads/poisson_draws.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/lane_math.hpp"
#include "core/lane_random.hpp"

namespace epsim::workloads {

namespace {

namespace lane = core::lane;

template <class I>
[[gnu::always_inline]] inline bool any(I mask) {
  std::int64_t a = 0;
  for (int j = 0; j < static_cast<int>(sizeof(I) / 8); ++j) {
    a |= mask[j];
  }
  return a != 0;
}

// A block of up to `width` categories: their means, the counters of their first uniforms (category index
// in the high half, so no two categories share a counter), and which lanes are real.
template <class D>
struct Block {
  using I = lane::IntOf<D>;
  using U = typename lane::Lanes<D>::U;
  D mean = lane::splat<D>(10.0);  // padding lanes: a harmless mean
  U counter{};
  I real{};
  Block(const double* means, const std::int32_t* index, int n) {
    for (int j = 0; j < n; ++j) {
      mean[j] = means[index[j]];
      counter[j] = static_cast<std::uint64_t>(index[j]) << 32;
      real[j] = -1;
    }
  }
};

// Means below 10: the count is the first k whose cumulative probability passes one uniform.
template <class D>
[[gnu::always_inline]] inline void invert_block(std::uint64_t key, const double* means, const std::int32_t* index,
                                                int n, std::int64_t* out) {
  using I = lane::IntOf<D>;
  const Block<D> b(means, index, n);
  const D u = b.real != 0 ? lane::uniforms_at<D>(key, b.counter) : 0.0;  // padding never passes (0 <= F)
  const D lam = b.mean;
  D p = lane::exp(-lam);
  D cdf = p;
  D k = lane::splat<D>(0.0);
  // P(Poisson(10) > 200) < 1e-150: the bound only guards against a cdf that rounds short of u.
  for (int step = 0; step < 200; ++step) {
    const I go = u > cdf;
    if (!any(go)) {
      break;
    }
    const D k1 = k + 1.0;
    const D p1 = p * lam / k1;
    k = go != 0 ? k1 : k;
    p = go != 0 ? p1 : p;
    cdf = go != 0 ? cdf + p1 : cdf;
  }
  for (int j = 0; j < n; ++j) {
    out[index[j]] = static_cast<std::int64_t>(k[j]);
  }
}

// Means from 10 up: PTRS, round r of a lane taking its uniforms U, V at its counters + 2r and + 2r + 1.
template <class D>
[[gnu::always_inline]] inline void ptrs_block(std::uint64_t key, const double* means, const std::int32_t* index, int n,
                                              std::int64_t* out, const double* log_fact) {
  using I = lane::IntOf<D>;
  const Block<D> blk(means, index, n);
  const D lam = blk.mean;
  D slam;
  for (int j = 0; j < lane::Lanes<D>::width; ++j) {
    slam[j] = std::sqrt(lam[j]);  // correctly rounded on every path
  }
  const D loglam = lane::log(lam);
  const D b = 0.931 + 2.53 * slam;
  const D a = -0.059 + 0.02483 * b;
  const D inv_alpha = 1.1239 + 1.1328 / (b - 3.4);
  const D v_r = 0.9277 - 3.6224 / (b - 2.0);
  I active = blk.real;
  D result = lane::splat<D>(0.0);
  for (std::uint64_t round = 0; any(active); ++round) {
    const D uu = lane::uniforms_at<D>(key, blk.counter + 2 * round) - 0.5;
    const D vv = lane::uniforms_at<D>(key, blk.counter + (2 * round + 1));
    const D us = 0.5 - lane::abs(uu);
    const D k = lane::floor((2.0 * a / us + b) * uu + lam + 0.43);
    const I fast = (us >= 0.07) & (vv <= v_r);
    I accept = fast;
    const I reject = (k < 0.0) | ((us < 0.013) & (vv > us));
    const I slow = active & ~fast & ~reject;
    if (any(slow)) {
      const D kk = k < 0.0 ? 0.0 : k;
      const D us2 = us * us;
      // log(V inv_alpha / (a / us^2 + b)) <= -lam + k log lam - log k!
      const D lhs = lane::log(vv * inv_alpha * us2 / (a + b * us2));
      const D rhs = -lam + kk * loglam - lane::log_factorial(kk, log_fact);
      accept |= slow & (lhs <= rhs);
    }
    const I done = active & accept;
    result = done != 0 ? k : result;
    active &= ~done;
  }
  for (int j = 0; j < n; ++j) {
    out[index[j]] = static_cast<std::int64_t>(result[j]);
  }
}

template <class D>
[[gnu::always_inline]] inline void draw_all(std::uint64_t key, const double* mean, std::span<const std::int32_t> small,
                                            std::span<const std::int32_t> large, std::int64_t* out) {
  constexpr auto W = static_cast<std::size_t>(lane::Lanes<D>::width);
  const double* log_fact = lane::log_factorial_table();
  for (std::size_t i = 0; i < small.size(); i += W) {
    invert_block<D>(key, mean, small.data() + i, static_cast<int>(std::min(W, small.size() - i)), out);
  }
  for (std::size_t i = 0; i < large.size(); i += W) {
    ptrs_block<D>(key, mean, large.data() + i, static_cast<int>(std::min(W, large.size() - i)), out, log_fact);
  }
}

// One copy per instruction set, each at its natural width; the kernels are inlined into each and
// compiled for its target.
void draw_baseline(std::uint64_t key, const double* mean, std::span<const std::int32_t> small,
                   std::span<const std::int32_t> large, std::int64_t* out) {
  draw_all<lane::Vd2>(key, mean, small, large, out);
}
#if defined(__x86_64__)
[[gnu::target("avx2")]] void draw_avx2(std::uint64_t key, const double* mean, std::span<const std::int32_t> small,
                                       std::span<const std::int32_t> large, std::int64_t* out) {
  draw_all<lane::Vd4>(key, mean, small, large, out);
}
[[gnu::target("avx512f,avx512dq,avx512vl")]] void draw_avx512(std::uint64_t key, const double* mean,
                                                              std::span<const std::int32_t> small,
                                                              std::span<const std::int32_t> large, std::int64_t* out) {
  draw_all<lane::Vd8>(key, mean, small, large, out);
}
#endif

}  // namespace

void PoissonDraws::draw(core::Rng& rng, std::span<const double> mean, std::span<std::int64_t> out, core::Isa isa) {
  if (out.size() != mean.size()) {
    throw core::Error(fmt::format("poisson draws: {} means but {} outputs", mean.size(), out.size()));
  }
  if (mean.size() > 0x7fffffff) {
    throw core::Error(fmt::format("poisson draws: {} means, more than 2^31 - 1", mean.size()));
  }
  small_.clear();
  large_.clear();
  for (std::size_t i = 0; i < mean.size(); ++i) {
    const double m = mean[i];
    if (!(m < 0x1p50)) {
      throw core::Error(fmt::format("poisson draws: mean {} at index {} is not a finite number below 2^50", m, i));
    }
    out[i] = 0;
    if (m >= 10.0) {
      large_.push_back(static_cast<std::int32_t>(i));
    } else if (m > 0.0) {
      small_.push_back(static_cast<std::int32_t>(i));
    }
  }
  if (!core::isa_supported(isa)) {
    throw core::Error(fmt::format("poisson draws: this CPU does not support {}", core::isa_name(isa)));
  }
  const std::uint64_t key = rng();
  switch (isa) {
#if defined(__x86_64__)
    case core::Isa::avx512:
      draw_avx512(key, mean.data(), small_, large_, out.data());
      return;
    case core::Isa::avx2:
      draw_avx2(key, mean.data(), small_, large_, out.data());
      return;
#endif
    default:
      draw_baseline(key, mean.data(), small_, large_, out.data());
  }
}

}  // namespace epsim::workloads
