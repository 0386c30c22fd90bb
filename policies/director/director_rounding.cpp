// SPDX-License-Identifier: Apache-2.0
#include "policies/director/director_rounding.hpp"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <boost/random/normal_distribution.hpp>
#include <boost/random/uniform_real_distribution.hpp>
#include <cmath>
#include <limits>
#include <optional>

#include "core/error.hpp"
#include "core/grid_view.hpp"
#include "policies/director/director_polish.hpp"

namespace epsim::policies {

namespace {

constexpr double k_tol = 1e-9;  // a value this close to 0 or 1 is integral; a capacity this close is tight

double snap(double v) {
  if (v <= k_tol) {
    return 0.0;
  }
  if (v >= 1.0 - k_tol) {
    return 1.0;
  }
  return v;
}

bool fractional(double v) {
  return v > 0.0 && v < 1.0;
}

// s_v = 2^-k with min(v, 1 - v) in (2^-(k+1), 2^-k].
int scale_class(double v) {
  const double m = std::min(v, 1.0 - v);
  return std::clamp(static_cast<int>(std::floor(-std::log2(m))), 1, 60);
}

// The tight rows each fractional variable F[f] sits in (-1: none), numbered densely: its expert's row,
// its GPU's capacity row when that is tight, its scale group's row (Eq. 7) while `groups`. Returns the
// number of rows.
int tight_rows(std::span<const std::size_t> F, std::span<const double> load, std::span<const int> cls, bool groups,
               std::size_t E, std::size_t G, int capacity, std::vector<std::array<int, 3>>& rows_of) {
  std::vector<int> row_id(E + G + 64, -1);
  int R = 0;
  rows_of.assign(F.size(), {});
  for (std::size_t f = 0; f < F.size(); ++f) {
    const std::size_t k = F[f];
    const std::size_t j = k % G;
    const std::array<std::size_t, 3> raw{k / G, load[j] >= capacity - k_tol ? E + j : SIZE_MAX,
                                         groups ? E + G + static_cast<std::size_t>(cls[k]) : SIZE_MAX};
    for (std::size_t a = 0; a < 3; ++a) {
      if (raw[a] == SIZE_MAX) {
        rows_of[f][a] = -1;
        continue;
      }
      if (row_id[raw[a]] < 0) {
        row_id[raw[a]] = R++;
      }
      rows_of[f][a] = row_id[raw[a]];
    }
  }
  return R;
}

// The scaled random direction g = S h, h = r projected onto the null space of M = A S (r ~ N(0, 1) per
// variable, drawn in order); returns max |g_f| / s_f.
double walk_direction(std::span<const std::size_t> F, std::span<const int> cls,
                      const std::vector<std::array<int, 3>>& rows_of, int R, core::Rng& rng, std::vector<double>& g) {
  boost::random::normal_distribution<double> normal(0.0, 1.0);
  Eigen::MatrixXd gram = Eigen::MatrixXd::Zero(R, R);
  Eigen::VectorXd b = Eigen::VectorXd::Zero(R);
  std::vector<double> r(F.size());
  std::vector<double> s(F.size());
  for (std::size_t f = 0; f < F.size(); ++f) {
    s[f] = std::ldexp(1.0, -cls[F[f]]);
    r[f] = normal(rng);
    for (const int a : rows_of[f]) {
      if (a < 0) {
        continue;
      }
      b(a) += s[f] * r[f];
      for (const int c : rows_of[f]) {
        if (c >= 0) {
          gram(a, c) += s[f] * s[f];
        }
      }
    }
  }
  const Eigen::VectorXd y = gram.ldlt().solve(b);
  g.assign(F.size(), 0.0);
  double norm = 0.0;
  for (std::size_t f = 0; f < F.size(); ++f) {
    double h = r[f];
    for (const int a : rows_of[f]) {
      if (a >= 0) {
        h -= s[f] * y(a);
      }
    }
    g[f] = s[f] * h;
    norm = std::max(norm, std::abs(g[f]) / s[f]);
  }
  return norm;
}

// The longest steps forwards and backwards along g that keep x in [0, 1] and loose capacities within
// C_max.
std::pair<double, double> step_bounds(std::span<const std::size_t> F, std::span<const double> g,
                                      std::span<const double> v, std::span<const double> load, std::size_t G,
                                      int capacity) {
  std::vector<double> gsum(G, 0.0);
  double t_fwd = std::numeric_limits<double>::infinity();
  double t_bwd = t_fwd;
  for (std::size_t f = 0; f < F.size(); ++f) {
    const double a = v[F[f]];
    if (g[f] > 0.0) {
      t_fwd = std::min(t_fwd, (1.0 - a) / g[f]);
      t_bwd = std::min(t_bwd, a / g[f]);
    } else if (g[f] < 0.0) {
      t_fwd = std::min(t_fwd, a / -g[f]);
      t_bwd = std::min(t_bwd, (1.0 - a) / -g[f]);
    }
    gsum[F[f] % G] += g[f];
  }
  for (std::size_t j = 0; j < G; ++j) {
    if (load[j] < capacity - k_tol) {
      if (gsum[j] > 0.0) {
        t_fwd = std::min(t_fwd, (capacity - load[j]) / gsum[j]);
      } else if (gsum[j] < 0.0) {
        t_bwd = std::min(t_bwd, (capacity - load[j]) / -gsum[j]);
      }
    }
  }
  return {t_fwd, t_bwd};
}

// The walk ends integral; argmax guards against leftover numerics, then any GPU over C_max is repaired
// by moving the expert to the GPU with room it had the largest share on.
std::vector<int> assign_integral(std::span<const double> v, std::size_t E, std::size_t G, int capacity, int* repairs) {
  const auto x = core::grid(v, E, G);
  std::vector<int> gpu_of(E);
  std::vector<int> used(G, 0);
  for (std::size_t i = 0; i < E; ++i) {
    std::size_t best = 0;
    for (std::size_t j = 1; j < G; ++j) {
      if (x(i, j) > x(i, best)) {
        best = j;
      }
    }
    gpu_of[i] = static_cast<int>(best);
    ++used[best];
  }
  for (std::size_t i = 0; i < E; ++i) {
    const auto j = static_cast<std::size_t>(gpu_of[i]);
    if (used[j] <= capacity) {
      continue;
    }
    std::size_t to = 0;
    double share = -1.0;
    for (std::size_t k = 0; k < G; ++k) {
      if (used[k] < capacity && x(i, k) > share) {
        share = x(i, k);
        to = k;
      }
    }
    --used[j];
    ++used[to];
    gpu_of[i] = static_cast<int>(to);
    if (repairs) {
      ++*repairs;
    }
  }
  return gpu_of;
}

}  // namespace

std::vector<int> round_layer_walk(std::span<const double> x, int experts, int gpus, int capacity, core::Rng& rng,
                                  long long* micro_steps, long long* macro_iterations, int* repairs) {
  const auto E = static_cast<std::size_t>(experts);
  const auto G = static_cast<std::size_t>(gpus);
  if (x.size() != E * G) {
    throw core::Error(fmt::format("director rounding: expected {} x values, got {}", E * G, x.size()));
  }
  std::vector<double> v(x.begin(), x.end());
  for (double& a : v) {
    a = snap(std::clamp(a, 0.0, 1.0));
  }
  boost::random::uniform_real_distribution<double> coin(0.0, 1.0);
  std::vector<int> cls(v.size(), 0);
  std::vector<double> load(G);
  std::vector<std::size_t> F;
  std::vector<std::array<int, 3>> rows_of;
  std::vector<double> g;
  for (int macro = 0; macro < 1000; ++macro) {
    std::size_t frac = 0;
    for (std::size_t k = 0; k < v.size(); ++k) {
      if (fractional(v[k])) {
        cls[k] = scale_class(v[k]);
        ++frac;
      }
    }
    if (frac == 0) {
      break;
    }
    if (macro_iterations) {
      ++*macro_iterations;
    }
    bool groups = true;  // scale-preserving rows (Eq. 7) on until they leave no direction
    for (std::size_t step = 0; step < 4 * v.size() + 4 * G + 64; ++step) {
      F.clear();
      for (std::size_t k = 0; k < v.size(); ++k) {
        if (fractional(v[k])) {
          F.push_back(k);
        }
      }
      if (F.empty()) {
        break;
      }
      std::fill(load.begin(), load.end(), 0.0);
      for (std::size_t k = 0; k < v.size(); ++k) {
        load[k % G] += v[k];
      }
      const int R = tight_rows(F, load, cls, groups, E, G, capacity, rows_of);
      if (walk_direction(F, cls, rows_of, R, rng, g) < 1e-7) {
        // No direction left: drop the scale rows, or stop at the (integral) vertex.
        if (groups) {
          groups = false;
          continue;
        }
        break;
      }
      const auto [t_fwd, t_bwd] = step_bounds(F, g, v, load, G, capacity);
      // Forwards with probability t_bwd / (t_fwd + t_bwd): E[step] = 0.
      const double t = coin(rng) * (t_fwd + t_bwd) < t_bwd ? t_fwd : -t_bwd;
      for (std::size_t f = 0; f < F.size(); ++f) {
        v[F[f]] = snap(std::clamp(v[F[f]] + t * g[f], 0.0, 1.0));
      }
      if (micro_steps) {
        ++*micro_steps;
      }
    }
  }
  return assign_integral(v, E, G, capacity, repairs);
}

DirectorRoundingResult round_director(const DirectorProblem& p, const DirectorLpResult& lp,
                                      const DirectorRoundingOptions& opt, core::Rng& rng) {
  validate(p);
  const auto E = static_cast<std::size_t>(p.experts);
  const auto G = static_cast<std::size_t>(p.gpus);
  if (lp.x.size() != static_cast<std::size_t>(p.layers) * E * G) {
    throw core::Error(fmt::format("director rounding: expected an LP solution of {} values, got {}",
                                  static_cast<std::size_t>(p.layers) * E * G, lp.x.size()));
  }
  if (opt.trials < 1) {
    throw core::Error(fmt::format("director rounding: expected trials >= 1, got {}", opt.trials));
  }
  DirectorRoundingResult res;
  res.gpu_of.resize(static_cast<std::size_t>(p.layers) * E);
  for (int l = 0; l < p.layers; ++l) {
    const std::span<const double> x(lp.x.data() + static_cast<std::size_t>(l) * E * G, E * G);
    std::vector<int> best;
    double best_ns = std::numeric_limits<double>::infinity();
    for (int t = 0; t < opt.trials; ++t) {
      std::vector<int> cand = round_layer_walk(x, p.experts, p.gpus, p.capacity, rng, &res.micro_steps,
                                               &res.macro_iterations, &res.repairs);
      const double ns = director_layer_cost(p, l, cand).total_ns();
      if (ns < best_ns) {
        best_ns = ns;
        best = std::move(cand);
      }
    }
    res.walk_ns += best_ns;
    if (opt.polish) {
      polish_layer(p, l, best, opt.polish_passes);
    }
    std::copy(best.begin(), best.end(),
              res.gpu_of.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(l) * E));
  }
  res.cost = director_cost(p, res.gpu_of);
  const auto ratio = [&](double ns) { return lp.bound_ns > 0.0 ? ns / lp.bound_ns : (ns > 0.0 ? INFINITY : 1.0); };
  res.gap = ratio(res.cost.total_ns());
  res.walk_gap = ratio(res.walk_ns);
  return res;
}

}  // namespace epsim::policies
