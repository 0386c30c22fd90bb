#include "calibration/kernel_fit.hpp"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

#include "calibration/least_squares.hpp"
#include "calibration/measured_work.hpp"
#include "core/error.hpp"
#include "hardware/roofline.hpp"

namespace epsim::calibration {
namespace {

constexpr int k_per_family = 4;  // compute, memory, knee, constant (launch + fixed)
constexpr int k_family_block = hardware::k_op_kinds * k_per_family;
constexpr double k_max_knee = 1000.0;  // the preset's bound: beyond it the knee is sharp in practice

// A kernel row reduced to what the model needs: its bounds at full efficiency and nominal speed.
struct Row {
  int family = 0;
  int gpu = -1;  // index into the fit's gpu ids, -1 = none
  double compute_ns = 0.0;
  double memory_ns = 0.0;
  double measured_ns = 0.0;
  int fold = 0;
};

// Natural parameters: per family [compute, memory, knee (0 = sharp), constant_us], then the log speeds
// of GPUs 0 .. G-2 (the last GPU's is minus their sum: geometric mean 1).
struct Problem {
  std::vector<Row> rows;
  hardware::StressConfig stress;  // the run's weighting of a GPU's deviation by kernel intensity
  int gpus = 0;                   // distinct gpu ids with speeds fitted (0 when fewer than two)
  int size() const { return k_family_block + std::max(gpus - 1, 0); }
  bool is_speed(int j) const { return j >= k_family_block; }
};

double log_speed(const Problem& p, const Eigen::VectorXd& nat, int gpu) {
  if (gpu < 0 || p.gpus < 2) {
    return 0.0;
  }
  if (gpu < p.gpus - 1) {
    return nat[k_family_block + gpu];
  }
  return -nat.tail(p.gpus - 1).sum();
}

// The speed a kernel of these bounds shows on a GPU of factor s, as a run applies it
// (RooflineCostModel::effective_speed): 1 + (s - 1) w(intensity over the ridge point).
double effective_speed(const Problem& p, double s, double compute_ns, double memory_ns) {
  if (s == 1.0) {
    return 1.0;
  }
  // intensity / ridge = (flops / bytes) / (achievable FLOP/ns / achievable bytes/ns) = compute / memory time.
  const double x = memory_ns > 0.0 ? compute_ns / memory_ns : (compute_ns > 0.0 ? 1e9 : 0.0);
  return 1.0 + (s - 1.0) * hardware::stress_weight(p.stress, x);
}

double predict_ns(const Problem& p, const Row& r, const Eigen::VectorXd& nat) {
  const int b = r.family * k_per_family;
  const double compute_ns = r.compute_ns / nat[b];
  const double memory_ns = r.memory_ns / nat[b + 1];
  const double body = hardware::roofline_body_ns(compute_ns, memory_ns, nat[b + 2]);
  return body / effective_speed(p, std::exp(log_speed(p, nat, r.gpu)), compute_ns, memory_ns) + nat[b + 3] * 1e3;
}

// Unconstrained <-> natural: efficiencies through a logistic (0, 1), the knee 1 + exp (>= 1), the constant
// exp (> 0), log speeds as they are.
double to_natural(int j, double theta) {
  if (j >= k_family_block) {
    return theta;
  }
  switch (j % k_per_family) {
    case 0:
    case 1:
      return 1.0 / (1.0 + std::exp(-theta));
    case 2:
      return std::min(1.0 + std::exp(theta), k_max_knee);
    default:
      return std::exp(theta);
  }
}

double to_theta(int j, double nat) {
  if (j >= k_family_block) {
    return nat;
  }
  switch (j % k_per_family) {
    case 0:
    case 1: {
      const double e = std::clamp(nat, 1e-4, 1.0 - 1e-4);
      return std::log(e / (1.0 - e));
    }
    case 2:
      return std::log(std::max(nat - 1.0, 1e-6));
    default:
      return std::log(std::max(nat, 1e-3));
  }
}

// Natural values of every parameter: `held`, with the free ones taken from `x` (unconstrained).
Eigen::VectorXd natural(const std::vector<int>& free, const Eigen::VectorXd& held, const Eigen::VectorXd& x) {
  Eigen::VectorXd nat = held;
  for (std::size_t i = 0; i < free.size(); ++i) {
    nat[free[i]] = to_natural(free[i], x[static_cast<Eigen::Index>(i)]);
  }
  return nat;
}

// Least squares of log(predicted / measured) over `rows` from `start` (natural values; the parameters
// not in `free` stay as they are); returns the natural parameters at the optimum.
Eigen::VectorXd solve(const Problem& p, const std::vector<std::size_t>& rows, const std::vector<int>& free,
                      const Eigen::VectorXd& start) {
  Eigen::VectorXd x(static_cast<Eigen::Index>(free.size()));
  for (std::size_t i = 0; i < free.size(); ++i) {
    x[static_cast<Eigen::Index>(i)] = to_theta(free[i], start[free[i]]);
  }
  const ResidualFn residuals = [&](const Eigen::VectorXd& theta, Eigen::VectorXd& r) {
    const Eigen::VectorXd nat = natural(free, start, theta);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Row& row = p.rows[rows[i]];
      r[static_cast<Eigen::Index>(i)] = std::log(predict_ns(p, row, nat) / row.measured_ns);
    }
  };
  return natural(free, start, least_squares(residuals, static_cast<Eigen::Index>(rows.size()), x));
}

// Jacobian of log(predicted) over the free natural parameters, each column scaled to a relative change
// (a log speed is already one), by central differences.
Eigen::MatrixXd scaled_jacobian(const Problem& p, const std::vector<int>& free, const Eigen::VectorXd& nat) {
  Eigen::MatrixXd j(static_cast<Eigen::Index>(p.rows.size()), static_cast<Eigen::Index>(free.size()));
  for (std::size_t c = 0; c < free.size(); ++c) {
    const int k = free[c];
    const double scale = p.is_speed(k) ? 1.0 : std::max(std::abs(nat[k]), 1e-6);
    const double h = 1e-5 * scale;
    Eigen::VectorXd up = nat;
    Eigen::VectorXd down = nat;
    up[k] += h;
    down[k] -= h;
    for (std::size_t i = 0; i < p.rows.size(); ++i) {
      const Row& r = p.rows[i];
      j(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(c)) =
          (std::log(predict_ns(p, r, up)) - std::log(predict_ns(p, r, down))) / (2.0 * h) * scale;
    }
  }
  return j;
}

std::string param_name(int j) {
  if (j >= k_family_block) {
    return fmt::format("speed factor #{}", j - k_family_block);
  }
  return fmt::format("{}.{}", hardware::op_kind_name(static_cast<hardware::OpKind>(j / k_per_family)),
                     k_family_params[static_cast<std::size_t>(j % k_per_family)]);
}

std::vector<std::size_t> all_rows(const Problem& p) {
  std::vector<std::size_t> v(p.rows.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    v[i] = i;
  }
  return v;
}

FamilyFit* family_of(std::vector<FamilyFit>& families, int family) {
  for (FamilyFit& ff : families) {
    if (static_cast<int>(ff.kind) == family) {
      return &ff;
    }
  }
  return nullptr;
}

// The kernel rows of `table` at full efficiency and nominal speed, with their GPU (index into `ids`,
// the distinct gpu ids when at least two) and their fold (row r of a family: r mod folds).
Problem make_problem(const hardware::GpuSpec& base, std::span<const Measurement> table, const KernelFitOptions& o,
                     std::vector<int>& ids, std::array<std::size_t, hardware::k_op_kinds>& count) {
  const int folds = o.folds;
  Problem p;
  p.stress = o.stress;
  for (const Measurement& m : table) {
    if (m.gpu_id >= 0 && !op_info(m.op).collective && std::find(ids.begin(), ids.end(), m.gpu_id) == ids.end()) {
      ids.push_back(m.gpu_id);
    }
  }
  std::sort(ids.begin(), ids.end());
  p.gpus = ids.size() >= 2 ? static_cast<int>(ids.size()) : 0;
  for (const Measurement& m : table) {
    hardware::OpKind kind{};
    if (!kernel_kind(m.op, kind)) {
      continue;
    }
    const hardware::KernelWork w = kernel_work(base, m);
    Row r;
    r.family = static_cast<int>(kind);
    r.gpu = p.gpus > 0 && m.gpu_id >= 0
                ? static_cast<int>(std::lower_bound(ids.begin(), ids.end(), m.gpu_id) - ids.begin())
                : -1;
    r.compute_ns = w.flops / hardware::peak_flop_per_ns(base, w.precision);
    r.memory_ns = w.bytes / base.hbm_gbps;
    r.measured_ns = m.latency_us * 1e3;
    r.fold = static_cast<int>(count[static_cast<std::size_t>(r.family)]++ % static_cast<std::size_t>(folds));
    p.rows.push_back(r);
  }
  if (p.rows.empty()) {
    throw core::Error("calibrate fit: the table has no kernel rows (expert_ffn, dense_gemm, attention_*)");
  }
  return p;
}

// The base preset's natural parameters; a family of enough rows gets its four free (`free`), and a
// FamilyFit in `out` either way.
Eigen::VectorXd start_families(const hardware::GpuSpec& base, const Problem& p,
                               const std::array<std::size_t, hardware::k_op_kinds>& count, int min_rows,
                               std::vector<int>& free, KernelFit& out) {
  Eigen::VectorXd nat = Eigen::VectorXd::Zero(p.size());
  for (int f = 0; f < hardware::k_op_kinds; ++f) {
    const hardware::Efficiency& e = base.efficiency[static_cast<std::size_t>(f)];
    const int b = f * k_per_family;
    nat[b] = e.compute;
    nat[b + 1] = e.memory;
    nat[b + 2] = e.knee;
    nat[b + 3] = base.kernel_launch_us + e.fixed_us;
    const std::size_t n = count[static_cast<std::size_t>(f)];
    if (n == 0) {
      continue;
    }
    FamilyFit ff;
    ff.kind = static_cast<hardware::OpKind>(f);
    ff.rows = n;
    ff.efficiency = e;
    ff.fitted = static_cast<int>(n) >= min_rows;
    if (ff.fitted) {
      for (int k = 0; k < k_per_family; ++k) {
        free.push_back(b + k);
      }
    } else {
      out.warnings.push_back(fmt::format("{}: {} rows, fewer than {}: kept the base preset's parameters",
                                         hardware::op_kind_name(ff.kind), n, min_rows));
    }
    out.families.push_back(ff);
  }
  for (int g = 0; g + 1 < p.gpus; ++g) {
    free.push_back(k_family_block + g);
  }
  for (const Row& r : p.rows) {
    add_error(family_of(out.families, r.family)->before, predict_ns(p, r, nat), r.measured_ns);
  }
  return nat;
}

// The parameters of `eig`'s weakest direction (components above 0.3); a per-GPU speed among them means
// speed and efficiency trade off exactly, which no held parameter fixes: refused.
std::vector<std::string> weakest_direction(const Problem& p, const std::vector<int>& free,
                                           const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>& eig) {
  std::vector<std::string> involved;
  bool speed = false;
  for (Eigen::Index c = 0; c < eig.eigenvectors().rows(); ++c) {
    if (std::abs(eig.eigenvectors()(c, 0)) > 0.3) {
      involved.push_back(param_name(free[static_cast<std::size_t>(c)]));
      speed = speed || p.is_speed(free[static_cast<std::size_t>(c)]);
    }
  }
  if (speed) {
    throw core::Error(
        fmt::format("calibrate fit: per-GPU speed and efficiency are not separable ({} trade off exactly): measure "
                    "the same shapes on every gpu_id",
                    fmt::join(involved, ", ")));
  }
  return involved;
}

struct Solution {
  Eigen::VectorXd nat;
  Eigen::VectorXd se;  // relative standard errors of the free parameters
};

// Which free parameter to hold next, with the warning that says why; -1 when the fit stands. An exact
// trade-off involving a speed factor refuses the fit.
Eigen::Index next_hold(const Problem& p, const std::vector<int>& free, const Solution& s,
                       const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>& eig, bool degenerate,
                       const KernelFitOptions& o, std::string& why) {
  if (!degenerate) {
    // Under the run's stress weighting speed and efficiency trade off exactly only within each regime, so a
    // table that cannot separate them leaves the speed factor undetermined rather than exactly degenerate.
    for (Eigen::Index c = 0; c < s.se.size(); ++c) {
      if (p.is_speed(free[static_cast<std::size_t>(c)]) && s.se[c] > o.poorly_determined) {
        throw core::Error(fmt::format(
            "calibrate fit: per-GPU speed and efficiency are not separable ({} has a relative standard error of "
            "{:.0f} %): measure the same shapes on every gpu_id",
            param_name(free[static_cast<std::size_t>(c)]), std::min(1e6, 100.0 * s.se[c])));
      }
    }
    Eigen::Index worst = -1;
    for (Eigen::Index c = 0; c < s.se.size(); ++c) {
      if (!p.is_speed(free[static_cast<std::size_t>(c)]) && s.se[c] > o.poorly_determined &&
          (worst < 0 || s.se[c] > s.se[worst])) {
        worst = c;
      }
    }
    if (worst >= 0) {
      why = fmt::format(
          "{}: poorly determined by the table (relative standard error {:.0f} %): held at the base "
          "preset's value",
          param_name(free[static_cast<std::size_t>(worst)]), 100.0 * s.se[worst]);
    }
    return worst;
  }
  Eigen::Index weakest = 0;
  eig.eigenvectors().col(0).cwiseAbs().maxCoeff(&weakest);
  const std::vector<std::string> involved = weakest_direction(p, free, eig);
  why = fmt::format(
      "{}: the table does not determine it ({}): held at the base preset's value",
      param_name(free[static_cast<std::size_t>(weakest)]),
      involved.size() <= 1 ? "no row depends on it" : fmt::format("it trades off with {}", fmt::join(involved, ", ")));
  return weakest;
}

// Speed and efficiency must separate without the stress weighting: where they trade off exactly when every
// kernel shows a GPU's whole deviation (GPU 0 measured only expert FFNs, GPU 1 only GEMMs), only the
// assumed shape of the weight between the regimes would tell them apart, which is no measurement.
void require_separable(const Problem& p, const std::vector<int>& free, const Eigen::VectorXd& nat,
                       const KernelFitOptions& o) {
  if (p.gpus < 2) {
    return;
  }
  Problem flat = p;
  flat.stress.enabled = false;
  const Eigen::MatrixXd j = scaled_jacobian(flat, free, nat);
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(j.transpose() * j);
  const double largest = eig.eigenvalues().maxCoeff();
  if (largest > 0.0 && eig.eigenvalues().minCoeff() / largest >= o.degenerate_ratio) {
    return;
  }
  weakest_direction(p, free, eig);  // throws when a speed factor is in the trade-off
}

// Fits, then holds at its base value whatever the table cannot determine and fits again, until the
// rest stands; `free` ends as the parameters fitted.
Solution fit_holding(const Problem& p, std::vector<int>& free, Eigen::VectorXd start, const Eigen::VectorXd& base_nat,
                     const KernelFitOptions& o, std::vector<std::string>& warnings) {
  Solution s;
  for (;;) {
    s.nat = solve(p, all_rows(p), free, start);
    s.se.resize(0);
    if (free.empty()) {
      return s;
    }
    require_separable(p, free, s.nat, o);
    const Eigen::MatrixXd j = scaled_jacobian(p, free, s.nat);
    const Eigen::MatrixXd a = j.transpose() * j;
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(a);
    const double largest = eig.eigenvalues().maxCoeff();
    const bool degenerate = !(largest > 0.0) || eig.eigenvalues().minCoeff() / largest < o.degenerate_ratio;
    if (!degenerate) {
      double rss = 0.0;
      for (const Row& r : p.rows) {
        rss += std::pow(std::log(predict_ns(p, r, s.nat) / r.measured_ns), 2);
      }
      const double dof = std::max(1.0, static_cast<double>(p.rows.size() - free.size()));
      s.se = (a.inverse().diagonal() * (rss / dof)).cwiseSqrt();
    }
    std::string why;
    const Eigen::Index hold = next_hold(p, free, s, eig, degenerate, o, why);
    if (hold < 0) {
      return s;
    }
    warnings.push_back(why);
    const int h = free[static_cast<std::size_t>(hold)];
    free.erase(free.begin() + hold);
    start[h] = base_nat[h];
  }
}

// k-fold: each fold's rows predicted by a fit of the others (started from the full fit).
void add_held_out_errors(const Problem& p, const std::vector<int>& free, const Eigen::VectorXd& nat, int folds,
                         std::vector<FamilyFit>& families) {
  for (int fold = 0; fold < folds; ++fold) {
    std::vector<std::size_t> train;
    std::vector<std::size_t> test;
    for (std::size_t i = 0; i < p.rows.size(); ++i) {
      (p.rows[i].fold == fold ? test : train).push_back(i);
    }
    if (test.empty() || train.size() <= free.size()) {
      continue;
    }
    const Eigen::VectorXd fold_nat = solve(p, train, free, nat);
    for (const std::size_t i : test) {
      const Row& r = p.rows[i];
      add_error(family_of(families, r.family)->held_out, predict_ns(p, r, fold_nat), r.measured_ns);
    }
  }
}

// The fitted values into each family and the GPU, with their standard errors and warnings at the peak.
void store_results(const Problem& p, const std::vector<int>& free, const Solution& s, double launch_us,
                   KernelFit& out) {
  for (const Row& r : p.rows) {
    add_error(family_of(out.families, r.family)->in_sample, predict_ns(p, r, s.nat), r.measured_ns);
  }
  for (FamilyFit& ff : out.families) {
    const int b = static_cast<int>(ff.kind) * k_per_family;
    if (!ff.fitted) {
      continue;
    }
    ff.efficiency = {s.nat[b], s.nat[b + 1], s.nat[b + 2], s.nat[b + 3] - launch_us};
    out.gpu.efficiency[static_cast<std::size_t>(ff.kind)] = ff.efficiency;
    for (int k = 0; k < k_per_family; ++k) {
      const auto it = std::find(free.begin(), free.end(), b + k);
      ff.held[static_cast<std::size_t>(k)] = it == free.end();
      ff.standard_error[static_cast<std::size_t>(k)] = it == free.end() ? 0.0 : s.se[it - free.begin()];
    }
    for (int k = 0; k < 2; ++k) {
      if (s.nat[b + k] > 0.98) {
        out.warnings.push_back(
            fmt::format("{}: {:.3f}, at the datasheet peak: the kernels run as fast as the "
                        "preset's peak allows (is the peak right? L2-resident data?)",
                        param_name(b + k), s.nat[b + k]));
      }
    }
  }
  for (int g = 0; g < p.gpus; ++g) {
    out.speed_factors.push_back(std::exp(log_speed(p, s.nat, g)));
  }
}

}  // namespace

KernelFit fit_kernels(const hardware::GpuSpec& base, std::span<const Measurement> table,
                      const KernelFitOptions& options) {
  KernelFit out;
  out.gpu = base;
  std::vector<int> ids;
  std::array<std::size_t, hardware::k_op_kinds> count{};
  const Problem p = make_problem(base, table, options, ids, count);
  std::vector<int> free;
  const Eigen::VectorXd base_nat = start_families(base, p, count, options.min_rows, free, out);
  if (p.rows.size() <= free.size()) {
    throw core::Error(fmt::format("calibrate fit: {} kernel rows for {} parameters: measure more shapes", p.rows.size(),
                                  free.size()));
  }
  Eigen::VectorXd start = base_nat;
  for (const int j : free) {  // a smooth knee to start from where the base has a sharp max
    if (!p.is_speed(j) && j % k_per_family == 2 && start[j] <= 0.0) {
      start[j] = 4.0;
    }
  }
  const Solution s = fit_holding(p, free, start, base_nat, options, out.warnings);
  add_held_out_errors(p, free, s.nat, options.folds, out.families);
  store_results(p, free, s, base.kernel_launch_us, out);
  if (p.gpus >= 2) {
    out.gpu_ids = ids;
  }
  return out;
}

}  // namespace epsim::calibration
