#include "policies/director_lp.hpp"

#include <fmt/format.h>
#include <coin/ClpSimplex.hpp>
#include <coin/CoinPackedMatrix.hpp>

#include <algorithm>
#include <cmath>

#include "sim/core/error.hpp"

namespace epsim::policies {

std::vector<HullLine> lower_hull_lines(const CostCurves& curves, int gpu, double max_tokens, int curve_points,
                                       double activated) {
  if (!(max_tokens > 0.0)) {
    return {};
  }
  // Points of the curve on [0, max_tokens]: its samples (or a uniform grid for exact curves) plus both ends.
  std::vector<double> n{0.0};
  if (curves.exact()) {
    const int k = std::max(curve_points, 2);
    for (int s = 1; s < k; ++s) {
      n.push_back(max_tokens * s / k);
    }
  } else {
    for (const double t : curves.sample_tokens(gpu)) {
      if (t > 0.0 && t < max_tokens) {
        n.push_back(t);
      }
    }
  }
  n.push_back(max_tokens);
  // Andrew's monotone chain, lower half: keep turning counter-clockwise.
  std::vector<std::pair<double, double>> hull;
  for (const double t : n) {
    const std::pair<double, double> q{t, t <= 0.0 ? 0.0 : curves.ns(gpu, t, activated)};
    while (hull.size() >= 2) {
      const auto& a = hull[hull.size() - 2];
      const auto& b = hull.back();
      const double cross = (b.first - a.first) * (q.second - a.second) - (b.second - a.second) * (q.first - a.first);
      if (cross > 0.0) {
        break;
      }
      hull.pop_back();
    }
    hull.push_back(q);
  }
  std::vector<HullLine> lines;
  for (std::size_t s = 0; s + 1 < hull.size(); ++s) {
    const double slope = (hull[s + 1].second - hull[s].second) / (hull[s + 1].first - hull[s].first);
    lines.push_back(HullLine{slope, hull[s].second - slope * hull[s].first});
  }
  return lines;
}

namespace {

// One layer's LP in Clp. Columns: x[i][j] (i * G + j), then per pass kind q: lambda_qj (G), tau_comp_q,
// tau_comm_q. Rows: assignment (E), capacity (G), per pass lambda definitions (G) and communication (G),
// the budget sum_q weight_q (tau_comp_q + tau_comm_q) + migration, then the computation epigraph rows.
class LayerLp {
 public:
  LayerLp(const DirectorProblem& p, int l, const DirectorLpOptions& opt, bool minimise) : p_(p), l_(l) {
    const int E = p.experts;
    const int G = p.gpus;
    const int P = p.passes;
    nx_ = E * G;
    budget_row_ = E + G + 2 * G * P;
    std::vector<int> rows;
    std::vector<int> cols;
    std::vector<double> vals;
    const auto add = [&](int r, int c, double v) {
      rows.push_back(r);
      cols.push_back(c);
      vals.push_back(v);
    };
    for (int i = 0; i < E; ++i) {
      for (int j = 0; j < G; ++j) {
        const int c = i * G + j;
        add(i, c, 1.0);
        add(E + j, c, 1.0);
        for (int q = 0; q < P; ++q) {
          const double n = p.expert_tokens(l, i, q);
          if (n > 0.0) {
            add(lambda_row(q, j), c, n);
          }
          for (int o = 0; o < G; ++o) {  // tokens of origin o that expert i on GPU j draws over the link o -> j
            const double ns = p.w(l, o, i, q) * p.ns_per_token(o, j);
            if (ns > 0.0) {
              add(comm_row(q, o), c, ns);
            }
          }
        }
      }
    }
    int r = budget_row_ + 1;
    std::vector<double> row_lo;
    std::vector<double> row_hi;
    for (int i = 0; i < E; ++i) {
      row_lo.push_back(1.0);
      row_hi.push_back(1.0);
    }
    for (int j = 0; j < G; ++j) {
      row_lo.push_back(-COIN_DBL_MAX);
      row_hi.push_back(p.capacity);
    }
    for (int q = 0; q < P; ++q) {
      for (int j = 0; j < G; ++j) {  // sum_i n_qi x_ij - lambda_qj = 0
        add(lambda_row(q, j), lambda_col(q, j), -1.0);
        row_lo.push_back(0.0);
        row_hi.push_back(0.0);
      }
      for (int j = 0; j < G; ++j) {  // comm_qj - tau_comm_q <= 0
        add(comm_row(q, j), tau_comm_col(q), -1.0);
        row_lo.push_back(-COIN_DBL_MAX);
        row_hi.push_back(0.0);
      }
    }
    for (int q = 0; q < P; ++q) {
      add(budget_row_, tau_comp_col(q), p.weight(q));
      add(budget_row_, tau_comm_col(q), p.weight(q));
    }
    // Migration: move_ns (1 - x[i][current(i)]) per expert; the constant move_ns E goes to the budget's
    // right-hand side and back onto the objective.
    if (p.charges_moves()) {
      for (int i = 0; i < E; ++i) {
        add(budget_row_, i * G + p.current_gpu(l, i), -p.move_ns);
      }
      move_const_ns_ = p.move_ns * E;
    }
    row_lo.push_back(-COIN_DBL_MAX);
    row_hi.push_back(COIN_DBL_MAX);
    lines_.resize(static_cast<std::size_t>(P) * static_cast<std::size_t>(G));
    for (int q = 0; q < P; ++q) {
      // The LP is linear in tokens only; it prices each GPU at the activation an even spread of the
      // pass's expected activated experts gives it (the integral polish prices each GPU's own).
      double tokens = 0.0;
      double active = 0.0;
      for (int i = 0; i < E; ++i) {
        tokens += p.expert_tokens(l, i, q);
        active += activation_probability(p.expert_tokens(l, i, q));
      }
      const double active_per_gpu = active / G;
      for (int j = 0; j < G; ++j) {  // a * lambda_qj - tau_comp_q <= -b
        std::vector<HullLine>& hull =
            lines_[static_cast<std::size_t>(q) * static_cast<std::size_t>(G) + static_cast<std::size_t>(j)];
        hull = lower_hull_lines(*p.curves, j, tokens, opt.curve_points, active_per_gpu);
        for (const HullLine& h : hull) {
          add(r, lambda_col(q, j), h.slope);
          add(r, tau_comp_col(q), -1.0);
          row_lo.push_back(-COIN_DBL_MAX);
          row_hi.push_back(-h.intercept_ns);
          ++r;
        }
      }
    }
    const int ncols = nx_ + P * (G + 2);
    std::vector<double> col_lo(static_cast<std::size_t>(ncols), 0.0);
    std::vector<double> col_hi(static_cast<std::size_t>(ncols), COIN_DBL_MAX);
    std::fill(col_hi.begin(), col_hi.begin() + nx_, 1.0);
    std::vector<double> obj(static_cast<std::size_t>(ncols), 0.0);
    if (minimise) {
      for (int q = 0; q < P; ++q) {
        obj[static_cast<std::size_t>(tau_comp_col(q))] = p.weight(q);
        obj[static_cast<std::size_t>(tau_comm_col(q))] = p.weight(q);
      }
      if (p.charges_moves()) {
        for (int i = 0; i < E; ++i) {
          const int home = i * G + p.current_gpu(l, i);  // x[i][current(i)]
          obj[static_cast<std::size_t>(home)] = -p.move_ns;
        }
      }
    }
    const CoinPackedMatrix m(true, rows.data(), cols.data(), vals.data(), static_cast<CoinBigIndex>(vals.size()));
    lp_.setLogLevel(0);
    lp_.loadProblem(m, col_lo.data(), col_hi.data(), obj.data(), row_lo.data(), row_hi.data());
    if (lp_.getNumRows() != r) {
      throw core::Error(fmt::format("director: internal LP row count {} != {}", lp_.getNumRows(), r));
    }
  }

  // true when feasible (optimal), false when proven infeasible.
  bool solve(double budget_ns) {
    lp_.setRowUpper(budget_row_, budget_ns >= COIN_DBL_MAX ? COIN_DBL_MAX : budget_ns - move_const_ns_);
    lp_.dual();
    if (lp_.isProvenOptimal()) {
      return true;
    }
    if (lp_.isProvenPrimalInfeasible()) {
      return false;
    }
    // Rare numerical trouble of the warm start: retry from scratch once.
    lp_.allSlackBasis(true);
    lp_.initialSolve();
    if (lp_.isProvenOptimal()) {
      return true;
    }
    if (lp_.isProvenPrimalInfeasible()) {
      return false;
    }
    throw core::Error(fmt::format("director: Clp failed on layer {} (status {})", l_, lp_.status()));
  }

  double objective() const { return lp_.objectiveValue() + move_const_ns_; }
  std::vector<double> x() const {
    const double* s = lp_.getColSolution();
    return {s, s + nx_};
  }

  // sum_q weight_q (tau_comp_q + tau_comm_q) the LP needs for an integral x given as gpu_of (an upper
  // bound on the optimum).
  double integral_value(std::span<const int> gpu_of) const {
    std::vector<double> lambda(static_cast<std::size_t>(p_.gpus));
    std::vector<double> comm(static_cast<std::size_t>(p_.gpus));
    double total = 0.0;
    for (int q = 0; q < p_.passes; ++q) {
      pass_loads(p_, l_, q, gpu_of, lambda, comm);
      double comp_ns = 0.0;
      for (int j = 0; j < p_.gpus; ++j) {
        for (const HullLine& h :
             lines_[static_cast<std::size_t>(q) * static_cast<std::size_t>(p_.gpus) + static_cast<std::size_t>(j)]) {
          comp_ns = std::max(comp_ns, h.slope * lambda[static_cast<std::size_t>(j)] + h.intercept_ns);
        }
      }
      total += p_.weight(q) * (comp_ns + *std::max_element(comm.begin(), comm.end()));
    }
    return total + migration_ns(p_, l_, gpu_of);
  }

 private:
  const DirectorProblem& p_;
  int l_;
  int lambda_row(int q, int j) const { return p_.experts + p_.gpus + 2 * p_.gpus * q + j; }
  int comm_row(int q, int j) const { return lambda_row(q, j) + p_.gpus; }
  int lambda_col(int q, int j) const { return nx_ + q * (p_.gpus + 2) + j; }
  int tau_comp_col(int q) const { return nx_ + q * (p_.gpus + 2) + p_.gpus; }
  int tau_comm_col(int q) const { return tau_comp_col(q) + 1; }

  int nx_ = 0;
  int budget_row_ = 0;
  double move_const_ns_ = 0.0;  // move_ns x experts: the migration term's constant part
  std::vector<std::vector<HullLine>> lines_;
  ClpSimplex lp_;
};

}  // namespace

DirectorLpResult solve_director_lp(const DirectorProblem& p, const DirectorLpOptions& opt) {
  validate(p);
  if (!(opt.epsilon > 0.0 && opt.epsilon < 1.0)) {
    throw core::Error(fmt::format("director: expected epsilon in (0, 1), got {}", opt.epsilon));
  }
  const auto E = static_cast<std::size_t>(p.experts);
  const auto G = static_cast<std::size_t>(p.gpus);
  DirectorLpResult res;
  res.x.assign(static_cast<std::size_t>(p.layers) * E * G, 0.0);
  for (int l = 0; l < p.layers; ++l) {
    const bool direct = opt.mode == DirectorLpOptions::Mode::direct;
    // Both modes start from the minimisation: its optimum tau* is where the feasibility of a budget flips.
    LayerLp lp(p, l, opt, true);
    ++res.lp_solves;
    if (!lp.solve(COIN_DBL_MAX)) {
      throw core::Error(fmt::format("director: layer {} LP infeasible", l));
    }
    std::vector<double> x = lp.x();
    double lo = lp.objective();
    double hi = lo;
    if (!direct) {
      // Algorithm 1, warm-started: beta_high = tau* is feasible (x-bar_best is the LP's optimum there) and
      // one probe certifies beta_low = tau* (1 - epsilon / 2) infeasible, which already meets the search's
      // stopping rule. Should Clp's optimum be off by more than that, the paper's search goes on from
      // there, its beta_high starting at the best of tau* and a feasible integral placement (round robin
      // respects C_max) and beta_low at 0 (no latency is negative).
      std::vector<int> rr(E);
      for (std::size_t i = 0; i < E; ++i) {
        rr[i] = static_cast<int>(i % G);
      }
      const double rr_value = lp.integral_value(rr);
      if (rr_value < hi) {  // never, but the search must start feasible
        hi = rr_value;
        x.assign(E * G, 0.0);
        for (std::size_t i = 0; i < E; ++i) {
          x[i * G + i % G] = 1.0;
        }
      }
      lo = 0.0;
      double beta = hi * (1.0 - 0.5 * opt.epsilon);
      while (hi - lo > std::max(opt.epsilon * hi, 1e-6)) {  // 1e-6 ns: an all-zero layer
        ++res.lp_solves;
        if (lp.solve(beta)) {
          hi = beta;
          x = lp.x();
        } else {
          lo = beta;
        }
        beta = 0.5 * (lo + hi);
      }
    }
    std::copy(x.begin(), x.end(), res.x.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(l) * E * G));
    res.layer_bound_ns.push_back(lo);
    res.bound_ns += lo;
    res.budget_ns += hi;
  }
  return res;
}

}  // namespace epsim::policies
