#include "policies/director_rounding.hpp"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <boost/random/normal_distribution.hpp>
#include <boost/random/uniform_real_distribution.hpp>
#include <cmath>
#include <limits>

#include "sim/core/error.hpp"

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
  boost::random::normal_distribution<double> normal(0.0, 1.0);
  boost::random::uniform_real_distribution<double> coin(0.0, 1.0);
  std::vector<int> cls(v.size(), 0);
  std::vector<double> load(G);
  const auto refresh_load = [&] {
    std::fill(load.begin(), load.end(), 0.0);
    for (std::size_t k = 0; k < v.size(); ++k) {
      load[k % G] += v[k];
    }
  };
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
      std::vector<std::size_t> F;
      for (std::size_t k = 0; k < v.size(); ++k) {
        if (fractional(v[k])) {
          F.push_back(k);
        }
      }
      if (F.empty()) {
        break;
      }
      refresh_load();
      // Rows of the tight constraints: expert rows [0, E), tight capacities [E, E + G), scale groups after.
      std::vector<int> row_id(E + G + 64, -1);
      int R = 0;
      std::vector<std::array<int, 3>> rows_of(F.size());
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
      // Scaled direction g = S h, h = r projected onto the null space of M = A S.
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
      std::vector<double> g(F.size());
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
      if (norm < 1e-7) {  // no direction left: drop the scale rows, or stop at the (integral) vertex
        if (groups) {
          groups = false;
          continue;
        }
        break;
      }
      // Longest steps forwards and backwards that keep x in [0, 1] and loose capacities within C_max.
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
  // The walk ends integral; argmax guards against leftover numerics, then any GPU over C_max is repaired.
  std::vector<int> gpu_of(E);
  std::vector<int> used(G, 0);
  for (std::size_t i = 0; i < E; ++i) {
    std::size_t best = 0;
    for (std::size_t j = 1; j < G; ++j) {
      if (v[i * G + j] > v[i * G + best]) {
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
    std::size_t to = 0;  // the GPU with room this expert had the largest share on
    double share = -1.0;
    for (std::size_t k = 0; k < G; ++k) {
      if (used[k] < capacity && v[i * G + k] > share) {
        share = v[i * G + k];
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

int polish_layer(const DirectorProblem& p, int l, std::span<int> gpu_of, int sweeps) {
  const auto G = static_cast<std::size_t>(p.gpus);
  const auto P = static_cast<std::size_t>(p.passes);
  const auto E = static_cast<std::size_t>(p.experts);
  // Per pass kind q: lambda[q * G + g], comm[q * G + origin], n[q * E + i].
  std::vector<double> lambda(P * G, 0.0);
  std::vector<double> comm(P * G, 0.0);
  std::vector<double> n(P * E);
  std::vector<int> used(G, 0);
  const auto rebuild = [&] {
    std::fill(used.begin(), used.end(), 0);
    for (int i = 0; i < p.experts; ++i) {
      ++used[static_cast<std::size_t>(gpu_of[static_cast<std::size_t>(i)])];
    }
    for (int q = 0; q < p.passes; ++q) {
      const auto at = static_cast<std::size_t>(q) * G;
      pass_loads(p, l, q, gpu_of, std::span<double>(lambda).subspan(at, G), std::span<double>(comm).subspan(at, G));
    }
  };
  for (int q = 0; q < p.passes; ++q) {
    for (int i = 0; i < p.experts; ++i) {
      n[static_cast<std::size_t>(q) * E + static_cast<std::size_t>(i)] = p.expert_tokens(l, i, q);
    }
  }
  rebuild();
  // Layer cost after moving expert i from a to b and expert i2 (or -1) from b to a.
  const auto cost_after = [&](int i, int a, int b, int i2) {
    double total = 0.0;
    for (int q = 0; q < p.passes; ++q) {
      const auto qo = static_cast<std::size_t>(q);
      const double d =
          n[qo * E + static_cast<std::size_t>(i)] - (i2 >= 0 ? n[qo * E + static_cast<std::size_t>(i2)] : 0.0);
      double comp_ns = 0.0;
      double comm_ns = 0.0;
      for (int g = 0; g < p.gpus; ++g) {
        const double lam = lambda[qo * G + static_cast<std::size_t>(g)] + (g == a ? -d : g == b ? d : 0.0);
        comp_ns = std::max(comp_ns, p.curves->ns(g, lam));
        double c = comm[qo * G + static_cast<std::size_t>(g)] +
                   p.w(l, g, i, q) * (p.ns_per_token(g, b) - p.ns_per_token(g, a));
        if (i2 >= 0) {
          c += p.w(l, g, i2, q) * (p.ns_per_token(g, a) - p.ns_per_token(g, b));
        }
        comm_ns = std::max(comm_ns, c);
      }
      total += p.weight(q) * (comp_ns + comm_ns);
    }
    return total;
  };
  const auto apply = [&](int i, int a, int b) {
    for (int q = 0; q < p.passes; ++q) {
      const auto qo = static_cast<std::size_t>(q);
      lambda[qo * G + static_cast<std::size_t>(a)] -= n[qo * E + static_cast<std::size_t>(i)];
      lambda[qo * G + static_cast<std::size_t>(b)] += n[qo * E + static_cast<std::size_t>(i)];
      for (int g = 0; g < p.gpus; ++g) {
        comm[qo * G + static_cast<std::size_t>(g)] += p.w(l, g, i, q) * (p.ns_per_token(g, b) - p.ns_per_token(g, a));
      }
    }
    --used[static_cast<std::size_t>(a)];
    ++used[static_cast<std::size_t>(b)];
    gpu_of[static_cast<std::size_t>(i)] = b;
  };
  double current = director_layer_cost(p, l, gpu_of).total_ns();
  int applied = 0;
  for (int sweep = 0; sweep < sweeps; ++sweep) {
    bool improved = false;
    for (int i = 0; i < p.experts; ++i) {
      for (int b = 0; b < p.gpus; ++b) {
        const int a = gpu_of[static_cast<std::size_t>(i)];
        if (b == a) {
          continue;
        }
        if (used[static_cast<std::size_t>(b)] < p.capacity) {
          const double c = cost_after(i, a, b, -1);
          if (c < current * (1.0 - 1e-12)) {
            apply(i, a, b);
            current = c;
            improved = true;
            ++applied;
            continue;
          }
        }
        for (int i2 = 0; i2 < p.experts; ++i2) {
          if (gpu_of[static_cast<std::size_t>(i2)] != b) {
            continue;
          }
          const double c = cost_after(i, a, b, i2);
          if (c < current * (1.0 - 1e-12)) {
            apply(i, a, b);
            apply(i2, b, a);
            current = c;
            improved = true;
            ++applied;
            break;
          }
        }
      }
    }
    // Whole GPUs exchanging their experts: which GPU takes which group matters when GPUs or links
    // differ, and no sequence of improving single moves and swaps may get there.
    std::vector<int> exchanged(gpu_of.begin(), gpu_of.end());
    for (int a = 0; a < p.gpus; ++a) {
      for (int b = a + 1; b < p.gpus; ++b) {
        for (std::size_t i = 0; i < exchanged.size(); ++i) {
          exchanged[i] = gpu_of[i] == a ? b : gpu_of[i] == b ? a : gpu_of[i];
        }
        const double c = director_layer_cost(p, l, exchanged).total_ns();
        if (c < current * (1.0 - 1e-12)) {
          std::copy(exchanged.begin(), exchanged.end(), gpu_of.begin());
          rebuild();
          current = c;
          improved = true;
          ++applied;
        }
      }
    }
    if (!improved) {
      break;
    }
  }
  return applied;
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
