// SPDX-License-Identifier: Apache-2.0
#include "workloads/poisson_draws.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

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

// Buffers of the PTRS rounds (PoissonDraws owns them): per large category its parameters; the categories
// still drawing (positions into `large` and the parameter arrays), the next round's, and the places in the
// round's list of those that need the exact test; the round's k, |U| margin and V by place in its list.
struct PtrsWork {
  double* lam;
  double* loglam;
  double* a;
  double* b;
  double* inv_alpha;
  double* v_r;
  std::int32_t* active;
  std::int32_t* next;
  std::int32_t* exact;
  double* round_k;  // k_widest_lanes slots past the list's end: whole vectors are stored
  double* round_us;
  double* round_v;
};
constexpr std::size_t k_widest_lanes = lane::Lanes<lane::Vd8>::width;

// v[pos[0..n)], padded; round 0's positions are 0, 1, 2...: a plain load then.
template <class D>
[[gnu::always_inline]] inline D gather(const double* v, const std::int32_t* pos, int n, double pad, bool in_order) {
  constexpr int W = lane::Lanes<D>::width;
  D x = lane::splat<D>(pad);
  if (in_order && n == W) {
    std::memcpy(&x, v + pos[0], sizeof x);
    return x;
  }
  for (int j = 0; j < n; ++j) {
    x[j] = v[pos[j]];
  }
  return x;
}

// PTRS's constants of every large category, once per draw; every category starts in the first round.
template <class D>
[[gnu::always_inline]] inline void ptrs_parameters(const double* means, std::span<const std::int32_t> large,
                                                   const PtrsWork& w) {
  constexpr int W = lane::Lanes<D>::width;
  const auto count = static_cast<int>(large.size());
  for (int i = 0; i < count; i += W) {
    const int n = std::min(W, count - i);
    D lam = lane::splat<D>(10.0);
    for (int j = 0; j < n; ++j) {
      lam[j] = means[large[static_cast<std::size_t>(i) + static_cast<std::size_t>(j)]];
    }
    D slam;
    for (int j = 0; j < W; ++j) {
      slam[j] = std::sqrt(lam[j]);  // correctly rounded on every path
    }
    const D b = 0.931 + 2.53 * slam;
    const D a = -0.059 + 0.02483 * b;
    const D loglam = lane::log(lam);
    const D inv_alpha = 1.1239 + 1.1328 / (b - 3.4);
    const D v_r = 0.9277 - 3.6224 / (b - 2.0);
    for (int j = 0; j < n; ++j) {
      w.lam[i + j] = lam[j];
      w.loglam[i + j] = loglam[j];
      w.a[i + j] = a[j];
      w.b[i + j] = b[j];
      w.inv_alpha[i + j] = inv_alpha[j];
      w.v_r[i + j] = v_r[j];
      w.active[i + j] = i + j;
    }
  }
}

// One round's candidate k and squeeze for the `n_active` categories of `active`: accepted ones are done,
// rejected ones go to `next`, the rest to w.exact (by place). Branch-free: every lane writes its k (one
// not done now is written again when it is) and its entry of both lists; only its own list grows.
// Returns (next's length, w.exact's length).
template <class D>
[[gnu::always_inline]] inline std::pair<int, int> ptrs_squeeze(std::uint64_t key, std::span<const std::int32_t> large,
                                                               std::uint64_t round, const std::int32_t* active,
                                                               int n_active, std::int32_t* next, std::int64_t* out,
                                                               const PtrsWork& w) {
  using I = lane::IntOf<D>;
  using U = typename lane::Lanes<D>::U;
  constexpr int W = lane::Lanes<D>::width;
  int n_next = 0;
  int n_exact = 0;
  for (int i = 0; i < n_active; i += W) {
    const int n = std::min(W, n_active - i);
    const std::int32_t* pos = active + i;
    U counter{};
    for (int j = 0; j < n; ++j) {
      counter[j] = static_cast<std::uint64_t>(large[static_cast<std::size_t>(pos[j])]) << 32;
    }
    const bool in_order = round == 0;
    const D lam = gather<D>(w.lam, pos, n, 10.0, in_order);
    const D a = gather<D>(w.a, pos, n, 1.0, in_order);
    const D b = gather<D>(w.b, pos, n, 10.0, in_order);
    const D v_r = gather<D>(w.v_r, pos, n, 0.5, in_order);
    const D uu = lane::uniforms_at<D>(key, counter + 2 * round) - 0.5;
    const D vv = lane::uniforms_at<D>(key, counter + (2 * round + 1));
    const D us = 0.5 - lane::abs(uu);
    const D k = lane::floor((2.0 * a / us + b) * uu + lam + 0.43);
    const I fast = (us >= 0.07) & (vv <= v_r);
    const I reject = (k < 0.0) | ((us < 0.013) & (vv > us));
    std::memcpy(w.round_k + i, &k, sizeof k);
    std::memcpy(w.round_us + i, &us, sizeof us);
    std::memcpy(w.round_v + i, &vv, sizeof vv);
    for (int j = 0; j < n; ++j) {
      out[large[static_cast<std::size_t>(pos[j])]] = static_cast<std::int64_t>(k[j]);
      const bool is_fast = fast[j] != 0;
      const bool is_rejected = !is_fast && reject[j] != 0;
      next[n_next] = pos[j];
      w.exact[n_exact] = i + j;
      n_next += is_rejected ? 1 : 0;
      n_exact += !is_fast && !is_rejected ? 1 : 0;
    }
  }
  return {n_next, n_exact};
}

// The exact test, log(V inv_alpha / (a / us^2 + b)) <= -lam + k log lam - log k!, for the round's
// w.exact places of `active`, in full vectors; the rejected go to `next`. Returns next's new length.
template <class D>
[[gnu::always_inline]] inline int ptrs_exact(std::span<const std::int32_t> large, const std::int32_t* active,
                                             int n_exact, std::int32_t* next, int n_next, std::int64_t* out,
                                             const double* log_fact, const PtrsWork& w) {
  using I = lane::IntOf<D>;
  constexpr int W = lane::Lanes<D>::width;
  for (int i = 0; i < n_exact; i += W) {
    const int n = std::min(W, n_exact - i);
    std::int32_t pos[W];  // the categories' positions, from their places in this round's list
    for (int j = 0; j < n; ++j) {
      pos[j] = active[w.exact[i + j]];
    }
    const std::int32_t* place = w.exact + i;
    const D lam = gather<D>(w.lam, pos, n, 10.0, false);
    const D loglam = gather<D>(w.loglam, pos, n, 2.0, false);
    const D a = gather<D>(w.a, pos, n, 1.0, false);
    const D b = gather<D>(w.b, pos, n, 10.0, false);
    const D inv_alpha = gather<D>(w.inv_alpha, pos, n, 1.0, false);
    const D k = gather<D>(w.round_k, place, n, 0.0, false);
    const D us = gather<D>(w.round_us, place, n, 0.25, false);
    const D vv = gather<D>(w.round_v, place, n, 0.5, false);
    const D us2 = us * us;
    const D lhs = lane::log(vv * inv_alpha * us2 / (a + b * us2));
    const D rhs = -lam + k * loglam - lane::log_factorial(k, log_fact);
    const I accept = lhs <= rhs;
    for (int j = 0; j < n; ++j) {
      out[large[static_cast<std::size_t>(pos[j])]] = static_cast<std::int64_t>(k[j]);
      next[n_next] = pos[j];
      n_next += accept[j] != 0 ? 0 : 1;
    }
  }
  return n_next;
}

// Means from 10 up: PTRS. Round r of a category takes its uniforms U, V at its counters + 2r and + 2r + 1,
// so the rounds may batch the categories still drawing in any grouping: each round runs the cheap
// squeeze over all of them, then the exact test (logs and log k!) only over those that need it, in full
// vectors.
template <class D>
[[gnu::always_inline]] inline void ptrs_all(std::uint64_t key, const double* means, std::span<const std::int32_t> large,
                                            std::int64_t* out, const double* log_fact, const PtrsWork& w) {
  ptrs_parameters<D>(means, large, w);
  std::int32_t* active = w.active;
  std::int32_t* next = w.next;
  int n_active = static_cast<int>(large.size());
  for (std::uint64_t round = 0; n_active > 0; ++round) {
    const auto [n_next, n_exact] = ptrs_squeeze<D>(key, large, round, active, n_active, next, out, w);
    n_active = ptrs_exact<D>(large, active, n_exact, next, n_next, out, log_fact, w);
    std::swap(active, next);
  }
}

template <class D>
[[gnu::always_inline]] inline void draw_all(std::uint64_t key, const double* mean, std::span<const std::int32_t> small,
                                            std::span<const std::int32_t> large, std::int64_t* out,
                                            const PtrsWork& work) {
  constexpr auto W = static_cast<std::size_t>(lane::Lanes<D>::width);
  for (std::size_t i = 0; i < small.size(); i += W) {
    invert_block<D>(key, mean, small.data() + i, static_cast<int>(std::min(W, small.size() - i)), out);
  }
  ptrs_all<D>(key, mean, large, out, lane::log_factorial_table(), work);
}

// One copy per instruction set, each at its natural width; the kernels are inlined into each and
// compiled for its target.
void draw_baseline(std::uint64_t key, const double* mean, std::span<const std::int32_t> small,
                   std::span<const std::int32_t> large, std::int64_t* out, const PtrsWork& work) {
  draw_all<lane::Vd2>(key, mean, small, large, out, work);
}
#if defined(__x86_64__)
[[gnu::target("avx2")]] void draw_avx2(std::uint64_t key, const double* mean, std::span<const std::int32_t> small,
                                       std::span<const std::int32_t> large, std::int64_t* out, const PtrsWork& work) {
  draw_all<lane::Vd4>(key, mean, small, large, out, work);
}
[[gnu::target("avx512f,avx512dq,avx512vl")]] void draw_avx512(std::uint64_t key, const double* mean,
                                                              std::span<const std::int32_t> small,
                                                              std::span<const std::int32_t> large, std::int64_t* out,
                                                              const PtrsWork& work) {
  draw_all<lane::Vd8>(key, mean, small, large, out, work);
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
  const std::size_t n = large_.size();
  params_.resize(6 * n);
  lists_.resize(3 * n);
  const std::size_t m = n + k_widest_lanes;  // whole vectors are stored past a list's end
  slow_.resize(3 * m);
  const PtrsWork work{params_.data(),         params_.data() + n,     params_.data() + 2 * n, params_.data() + 3 * n,
                      params_.data() + 4 * n, params_.data() + 5 * n, lists_.data(),          lists_.data() + n,
                      lists_.data() + 2 * n,  slow_.data(),           slow_.data() + m,       slow_.data() + 2 * m};
  switch (isa) {
#if defined(__x86_64__)
    case core::Isa::avx512:
      draw_avx512(key, mean.data(), small_, large_, out.data(), work);
      return;
    case core::Isa::avx2:
      draw_avx2(key, mean.data(), small_, large_, out.data(), work);
      return;
#endif
    default:
      draw_baseline(key, mean.data(), small_, large_, out.data(), work);
  }
}

}  // namespace epsim::workloads
