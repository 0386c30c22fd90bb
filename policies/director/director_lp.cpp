// SPDX-License-Identifier: Apache-2.0
#include "policies/director/director_lp.hpp"

#include <fmt/format.h>
#include <coin/ClpSimplex.hpp>
#include <coin/CoinPackedMatrix.hpp>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

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
    nx_ = p.experts * p.gpus;
    budget_row_ = p.experts + p.gpus * (1 + 2 * p.passes);
    Rows m;
    add_assignment_columns(m);
    add_pass_rows(m);
    add_budget_row(m);
    add_hull_rows(m, opt);
    const int ncols = nx_ + p.passes * (p.gpus + 2);
    std::vector<double> col_lo(static_cast<std::size_t>(ncols), 0.0);
    std::vector<double> col_hi(static_cast<std::size_t>(ncols), COIN_DBL_MAX);
    std::fill(col_hi.begin(), col_hi.begin() + nx_, 1.0);
    const std::vector<double> obj = objective_row(ncols, minimise);
    const CoinPackedMatrix matrix(true, m.rows.data(), m.cols.data(), m.vals.data(),
                                  static_cast<CoinBigIndex>(m.vals.size()));
    lp_.setLogLevel(0);
    lp_.loadProblem(matrix, col_lo.data(), col_hi.data(), obj.data(), m.lo.data(), m.hi.data());
    if (lp_.getNumRows() != static_cast<int>(m.lo.size())) {
      throw core::Error(fmt::format("director: internal LP row count {} != {}", lp_.getNumRows(), m.lo.size()));
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
  // The constraint matrix as triplets, and each row's bounds (rows are numbered by their bounds' order).
  struct Rows {
    std::vector<int> rows;
    std::vector<int> cols;
    std::vector<double> vals;
    std::vector<double> lo;
    std::vector<double> hi;
    void add(int r, int c, double v) {
      rows.push_back(r);
      cols.push_back(c);
      vals.push_back(v);
    }
    void bound(double low, double high) {
      lo.push_back(low);
      hi.push_back(high);
    }
  };

  // The x columns: assignment (each expert once), capacity (slots per GPU), and each pass's tokens and
  // link time the expert brings to its GPU.
  void add_assignment_columns(Rows& m) const {
    const int E = p_.experts;
    const int G = p_.gpus;
    for (int i = 0; i < E; ++i) {
      for (int j = 0; j < G; ++j) {
        const int c = i * G + j;
        m.add(i, c, 1.0);
        m.add(E + j, c, 1.0);
        for (int q = 0; q < p_.passes; ++q) {
          const double n = p_.expert_tokens(l_, i, q);
          if (n > 0.0) {
            m.add(lambda_row(q, j), c, n);
          }
          for (int o = 0; o < G; ++o) {  // tokens of origin o that expert i on GPU j draws over the link o -> j
            const double ns = p_.w(l_, o, i, q) * p_.ns_per_token(o, j);
            if (ns > 0.0) {
              m.add(comm_row(q, o), c, ns);
            }
          }
        }
      }
    }
    for (int i = 0; i < E; ++i) {
      m.bound(1.0, 1.0);
    }
    for (int j = 0; j < G; ++j) {
      m.bound(-COIN_DBL_MAX, p_.capacity);
    }
  }

  // Per pass: lambda_qj is GPU j's tokens, and tau_comm_q bounds every GPU's link time.
  void add_pass_rows(Rows& m) const {
    for (int q = 0; q < p_.passes; ++q) {
      for (int j = 0; j < p_.gpus; ++j) {  // sum_i n_qi x_ij - lambda_qj = 0
        m.add(lambda_row(q, j), lambda_col(q, j), -1.0);
        m.bound(0.0, 0.0);
      }
      for (int j = 0; j < p_.gpus; ++j) {  // comm_qj - tau_comm_q <= 0
        m.add(comm_row(q, j), tau_comm_col(q), -1.0);
        m.bound(-COIN_DBL_MAX, 0.0);
      }
    }
  }

  // sum_q weight_q (tau_comp_q + tau_comm_q) + migration; its upper bound is the search's budget.
  void add_budget_row(Rows& m) {
    for (int q = 0; q < p_.passes; ++q) {
      m.add(budget_row_, tau_comp_col(q), p_.weight(q));
      m.add(budget_row_, tau_comm_col(q), p_.weight(q));
    }
    // Migration: move_ns (1 - x[i][current(i)]) per expert; the constant move_ns E goes to the budget's
    // right-hand side and back onto the objective.
    if (p_.charges_moves()) {
      for (int i = 0; i < p_.experts; ++i) {
        m.add(budget_row_, i * p_.gpus + p_.current_gpu(l_, i), -p_.move_ns);
      }
      move_const_ns_ = p_.move_ns * p_.experts;
    }
    m.bound(-COIN_DBL_MAX, COIN_DBL_MAX);
  }

  // The computation epigraph: tau_comp_q >= every hull line of every GPU's curve at lambda_qj.
  void add_hull_rows(Rows& m, const DirectorLpOptions& opt) {
    const int G = p_.gpus;
    lines_.resize(static_cast<std::size_t>(p_.passes) * static_cast<std::size_t>(G));
    for (int q = 0; q < p_.passes; ++q) {
      // The LP is linear in tokens only; it prices each GPU at the activation an even spread of the
      // pass's expected activated experts gives it (the integral polish prices each GPU's own).
      double tokens = 0.0;
      double active = 0.0;
      for (int i = 0; i < p_.experts; ++i) {
        tokens += p_.expert_tokens(l_, i, q);
        active += activation_probability(p_.expert_tokens(l_, i, q));
      }
      const double active_per_gpu = active / G;
      for (int j = 0; j < G; ++j) {  // a * lambda_qj - tau_comp_q <= -b
        std::vector<HullLine>& hull =
            lines_[static_cast<std::size_t>(q) * static_cast<std::size_t>(G) + static_cast<std::size_t>(j)];
        hull = lower_hull_lines(*p_.curves, j, tokens, opt.curve_points, active_per_gpu);
        for (const HullLine& h : hull) {
          const int r = static_cast<int>(m.lo.size());
          m.add(r, lambda_col(q, j), h.slope);
          m.add(r, tau_comp_col(q), -1.0);
          m.bound(-COIN_DBL_MAX, -h.intercept_ns);
        }
      }
    }
  }

  // Minimisation: the budget row's terms; feasibility probes (the bisection): none.
  std::vector<double> objective_row(int ncols, bool minimise) const {
    std::vector<double> obj(static_cast<std::size_t>(ncols), 0.0);
    if (!minimise) {
      return obj;
    }
    for (int q = 0; q < p_.passes; ++q) {
      obj[static_cast<std::size_t>(tau_comp_col(q))] = p_.weight(q);
      obj[static_cast<std::size_t>(tau_comm_col(q))] = p_.weight(q);
    }
    if (p_.charges_moves()) {
      for (int i = 0; i < p_.experts; ++i) {
        const int home = i * p_.gpus + p_.current_gpu(l_, i);  // x[i][current(i)]
        obj[static_cast<std::size_t>(home)] = -p_.move_ns;
      }
    }
    return obj;
  }

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
