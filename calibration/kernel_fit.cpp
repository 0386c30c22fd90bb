// SPDX-License-Identifier: Apache-2.0
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

// Parameters per group (a kernel family at one precision): compute, memory, knee, constant (launch +
// fixed), floor_us, softmax_head_dim.
constexpr int k_per_family = static_cast<int>(k_family_params.size());
constexpr int k_groups = hardware::k_op_kinds * hardware::k_precisions;
constexpr int k_family_block = k_groups * k_per_family;
constexpr double k_max_knee = 1000.0;  // the preset's bound: beyond it the knee is sharp in practice
constexpr int k_floor = 4;
constexpr int k_softmax = 5;

int group_of(hardware::OpKind kind, hardware::Precision p) {
  return static_cast<int>(kind) * hardware::k_precisions + static_cast<int>(p);
}
hardware::OpKind kind_of_group(int g) {
  return static_cast<hardware::OpKind>(g / hardware::k_precisions);
}
hardware::Precision precision_of_group(int g) {
  return static_cast<hardware::Precision>(g % hardware::k_precisions);
}

// A kernel row reduced to what the model needs: its bounds at full efficiency and nominal speed (the
// compute bound with its GEMM tile waves), and its attention head dim.
struct Row {
  int family = 0;  // group: family x precision
  int gpu = -1;    // index into the fit's gpu ids, -1 = none
  double compute_ns = 0.0;
  double memory_ns = 0.0;
  double head_dim = 0.0;
  double measured_ns = 0.0;
  int fold = 0;
  hardware::KernelLibrary library = hardware::KernelLibrary::any;  // of the row's recorded kernel
};

// Natural parameters: per group [compute, memory, knee (0 = sharp), constant_us, floor_us,
// softmax_head_dim], then the log speeds of GPUs 0 .. G-2 (the last GPU's is minus their sum: geometric
// mean 1). Memory efficiencies stay under the GPU's max_memory_efficiency.
struct Problem {
  std::vector<Row> rows;
  hardware::StressConfig stress;  // the run's weighting of a GPU's deviation by kernel intensity
  int gpus = 0;                   // distinct gpu ids with speeds fitted (0 when fewer than two)
  double max_memory = 1.0;        // the GPU's ceiling on memory efficiency
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
  const double compute_ns = r.compute_ns / nat[b] * hardware::head_dim_factor(nat[b + k_softmax], r.head_dim);
  const double memory_ns = r.memory_ns / nat[b + 1];
  const double body = std::max(hardware::roofline_body_ns(compute_ns, memory_ns, nat[b + 2]), nat[b + k_floor] * 1e3);
  return body / effective_speed(p, std::exp(log_speed(p, nat, r.gpu)), compute_ns, memory_ns) + nat[b + 3] * 1e3;
}

// Unconstrained <-> natural: the compute efficiency through a logistic (0, 1), the memory efficiency
// through one scaled to (0, max_memory), the knee 1 + exp (>= 1), the constant, floor and softmax head
// dim exp (> 0), log speeds as they are.
double to_natural(int j, double theta, double max_memory) {
  if (j >= k_family_block) {
    return theta;
  }
  switch (j % k_per_family) {
    case 0:
      return 1.0 / (1.0 + std::exp(-theta));
    case 1:
      return max_memory / (1.0 + std::exp(-theta));
    case 2:
      return std::min(1.0 + std::exp(theta), k_max_knee);
    default:
      return std::exp(theta);
  }
}

double to_theta(int j, double nat, double max_memory) {
  if (j >= k_family_block) {
    return nat;
  }
  switch (j % k_per_family) {
    case 0:
    case 1: {
      const double e = std::clamp(j % k_per_family == 1 ? nat / max_memory : nat, 1e-4, 1.0 - 1e-4);
      return std::log(e / (1.0 - e));
    }
    case 2:
      return std::log(std::max(nat - 1.0, 1e-6));
    default:
      return std::log(std::max(nat, 1e-3));
  }
}

// Natural values of every parameter: `held`, with the free ones taken from `x` (unconstrained).
Eigen::VectorXd natural(const Problem& p, const std::vector<int>& free, const Eigen::VectorXd& held,
                        const Eigen::VectorXd& x) {
  Eigen::VectorXd nat = held;
  for (std::size_t i = 0; i < free.size(); ++i) {
    nat[free[i]] = to_natural(free[i], x[static_cast<Eigen::Index>(i)], p.max_memory);
  }
  return nat;
}

// Least squares of log(predicted / measured) over `rows` from `start` (natural values; the parameters
// not in `free` stay as they are); returns the natural parameters at the optimum.
Eigen::VectorXd solve(const Problem& p, const std::vector<std::size_t>& rows, const std::vector<int>& free,
                      const Eigen::VectorXd& start) {
  Eigen::VectorXd x(static_cast<Eigen::Index>(free.size()));
  for (std::size_t i = 0; i < free.size(); ++i) {
    x[static_cast<Eigen::Index>(i)] = to_theta(free[i], start[free[i]], p.max_memory);
  }
  const ResidualFn residuals = [&](const Eigen::VectorXd& theta, Eigen::VectorXd& r) {
    const Eigen::VectorXd nat = natural(p, free, start, theta);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Row& row = p.rows[rows[i]];
      r[static_cast<Eigen::Index>(i)] = std::log(predict_ns(p, row, nat) / row.measured_ns);
    }
  };
  return natural(p, free, start, least_squares(residuals, static_cast<Eigen::Index>(rows.size()), x));
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
  const int g = j / k_per_family;
  return fmt::format("{}.{}.{}", hardware::op_kind_name(kind_of_group(g)),
                     hardware::precision_name(precision_of_group(g)),
                     k_family_params[static_cast<std::size_t>(j % k_per_family)]);
}

std::vector<std::size_t> all_rows(const Problem& p) {
  std::vector<std::size_t> v(p.rows.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    v[i] = i;
  }
  return v;
}

FamilyFit* family_of(std::vector<FamilyFit>& families, int group) {
  for (FamilyFit& ff : families) {
    if (group_of(ff.kind, ff.precision) == group) {
      return &ff;
    }
  }
  return nullptr;
}

// The kernel rows of `table` at full efficiency and nominal speed, with their GPU (index into `ids`,
// the distinct gpu ids when at least two) and their fold (row r of a family: r mod folds).
Problem make_problem(const hardware::GpuSpec& base, std::span<const Measurement> table, const KernelFitOptions& o,
                     std::vector<int>& ids, std::array<std::size_t, k_groups>& count) {
  const int folds = o.folds;
  Problem p;
  p.stress = o.stress;
  p.max_memory = base.max_memory_efficiency;
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
    r.family = group_of(kind, w.precision);
    r.gpu = p.gpus > 0 && m.gpu_id >= 0
                ? static_cast<int>(std::lower_bound(ids.begin(), ids.end(), m.gpu_id) - ids.begin())
                : -1;
    r.compute_ns =
        w.flops / hardware::peak_flop_per_ns(base, w.precision) * hardware::gemm_wave_factor(base, w.gemm_m, w.gemm_n);
    r.memory_ns = w.bytes / base.hbm_gbps;
    r.head_dim = w.head_dim;
    r.library = hardware::library_of_kernel(m.kernel);
    r.measured_ns = m.latency_us * 1e3;
    r.fold = static_cast<int>(count[static_cast<std::size_t>(r.family)]++ % static_cast<std::size_t>(folds));
    p.rows.push_back(r);
  }
  if (p.rows.empty()) {
    throw core::Error("calibrate fit: the table has no kernel rows (expert_ffn, dense_gemm, attention_*)");
  }
  return p;
}

// Whether the rows of group `g` show at least two head dims: else the softmax term trades off with the
// compute efficiency exactly.
bool several_head_dims(const Problem& p, int g) {
  double first = 0.0;
  for (const Row& r : p.rows) {
    if (r.family == g && r.head_dim > 0.0) {
      if (first > 0.0 && r.head_dim != first) {
        return true;
      }
      first = r.head_dim;
    }
  }
  return false;
}

// The base preset's natural parameters; a group (family x precision) of enough rows gets its parameters
// free (`free`; the softmax head dim only for attention rows of several head dims), and a FamilyFit in
// `out` either way.
Eigen::VectorXd start_families(const hardware::GpuSpec& base, const Problem& p,
                               const std::array<std::size_t, k_groups>& count, int min_rows, std::vector<int>& free,
                               KernelFit& out) {
  Eigen::VectorXd nat = Eigen::VectorXd::Zero(p.size());
  for (int g = 0; g < k_groups; ++g) {
    const hardware::Efficiency& e = base.eff(kind_of_group(g), precision_of_group(g));
    const int b = g * k_per_family;
    nat[b] = e.compute;
    nat[b + 1] = e.memory;
    nat[b + 2] = e.knee;
    nat[b + 3] = base.kernel_launch_us + e.fixed_us;
    nat[b + k_floor] = e.floor_us;
    nat[b + k_softmax] = e.softmax_head_dim;
    const std::size_t n = count[static_cast<std::size_t>(g)];
    if (n == 0) {
      continue;
    }
    FamilyFit ff;
    ff.kind = kind_of_group(g);
    ff.precision = precision_of_group(g);
    ff.rows = n;
    ff.efficiency = e;
    ff.fitted = static_cast<int>(n) >= min_rows;
    if (ff.fitted) {
      for (int k = 0; k < k_softmax; ++k) {
        free.push_back(b + k);
      }
      if (several_head_dims(p, g)) {
        free.push_back(b + k_softmax);
      }
    } else {
      out.warnings.push_back(fmt::format("{} {}: {} rows, fewer than {}: kept the base preset's parameters",
                                         hardware::op_kind_name(ff.kind), hardware::precision_name(ff.precision), n,
                                         min_rows));
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

// Each group's sum of squared log errors under `nat`.
std::array<double, k_groups> group_rss(const Problem& p, const Eigen::VectorXd& nat) {
  std::array<double, k_groups> rss{};
  for (const Row& r : p.rows) {
    rss[static_cast<std::size_t>(r.family)] += std::pow(std::log(predict_ns(p, r, nat) / r.measured_ns), 2);
  }
  return rss;
}

// A floor (a kernel's least body time) is mimicked on the smallest rows by a fixed cost and a smooth knee,
// so the fit prefers the model without it: first every group without its floor, then with the floors
// free; a group keeps its floor only when that halves the squared error left without it, and the kept
// floors are fitted once more with everything else. `free` ends as the parameters fitted.
Solution fit_with_floors(const Problem& p, std::vector<int>& free, const Eigen::VectorXd& start,
                         const Eigen::VectorXd& base_nat, const KernelFitOptions& o,
                         std::vector<std::string>& warnings) {
  std::vector<int> floors;
  std::vector<int> rest;
  for (const int j : free) {
    (!p.is_speed(j) && j % k_per_family == k_floor ? floors : rest).push_back(j);
  }
  Eigen::VectorXd start_rest = start;
  for (const int j : floors) {
    start_rest[j] = base_nat[j];
  }
  std::vector<std::string> notes;
  Solution without = fit_holding(p, rest, start_rest, base_nat, o, notes);
  if (floors.empty()) {
    free = rest;
    warnings.insert(warnings.end(), notes.begin(), notes.end());
    return without;
  }
  std::vector<int> with_free = rest;
  with_free.insert(with_free.end(), floors.begin(), floors.end());
  Eigen::VectorXd start_with = without.nat;
  for (const int j : floors) {
    start_with[j] = start[j];
  }
  std::vector<std::string> ignored;
  const Solution with = fit_holding(p, with_free, start_with, base_nat, o, ignored);
  const std::array<double, k_groups> rss_without = group_rss(p, without.nat);
  const std::array<double, k_groups> rss_with = group_rss(p, with.nat);
  std::vector<int> kept;
  for (const int j : floors) {
    const auto g = static_cast<std::size_t>(j / k_per_family);
    if (std::find(with_free.begin(), with_free.end(), j) != with_free.end() && rss_with[g] < 0.5 * rss_without[g]) {
      kept.push_back(j);
    }
  }
  if (kept.empty()) {
    free = rest;
    warnings.insert(warnings.end(), notes.begin(), notes.end());
    return without;
  }
  // The kept groups start from the fit with floors, the others from the one without.
  Eigen::VectorXd start_final = without.nat;
  for (const int j : kept) {
    const int b = j - k_floor;
    start_final.segment(b, k_per_family) = with.nat.segment(b, k_per_family);
    warnings.push_back(fmt::format("{}: a floor: the squared error left without it is {:.1f}x larger", param_name(j),
                                   rss_without[static_cast<std::size_t>(j / k_per_family)] /
                                       std::max(rss_with[static_cast<std::size_t>(j / k_per_family)], 1e-300)));
  }
  free = rest;
  for (const int j : kept) {  // parameters held without the floor may be determined with it
    for (int k = 0; k < k_softmax; ++k) {
      const int jj = j - k_floor + k;
      if (std::find(free.begin(), free.end(), jj) == free.end() &&
          std::find(with_free.begin(), with_free.end(), jj) != with_free.end()) {
        free.push_back(jj);
      }
    }
  }
  std::sort(free.begin(), free.end());
  return fit_holding(p, free, start_final, base_nat, o, warnings);
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

// The library the rows of group `g` ran (their `kernel` column): the one all share, else `any` (with a
// warning when they name several: one preset's efficiencies describe one library).
hardware::KernelLibrary rows_library(const Problem& p, int g, std::vector<std::string>& warnings) {
  std::vector<hardware::KernelLibrary> seen;
  for (const Row& r : p.rows) {
    if (r.family == g && std::find(seen.begin(), seen.end(), r.library) == seen.end()) {
      seen.push_back(r.library);
    }
  }
  if (seen.size() == 1) {
    return seen.front();
  }
  std::vector<std::string_view> names;
  names.reserve(seen.size());
  for (const hardware::KernelLibrary l : seen) {
    names.push_back(hardware::library_info(l).name);
  }
  warnings.push_back(
      fmt::format("{} {}: rows of several kernel libraries ({}): the efficiencies describe their mix; "
                  "fit each library's rows apart",
                  hardware::op_kind_name(kind_of_group(g)), hardware::precision_name(precision_of_group(g)),
                  fmt::join(names, ", ")));
  return hardware::KernelLibrary::any;
}

// The fitted values into each family and the GPU, with their standard errors and warnings at the peak.
void store_results(const Problem& p, const std::vector<int>& free, const Solution& s, double launch_us,
                   KernelFit& out) {
  for (const Row& r : p.rows) {
    add_error(family_of(out.families, r.family)->in_sample, predict_ns(p, r, s.nat), r.measured_ns);
  }
  for (FamilyFit& ff : out.families) {
    const int b = group_of(ff.kind, ff.precision) * k_per_family;
    if (!ff.fitted) {
      continue;
    }
    ff.efficiency = {s.nat[b],
                     s.nat[b + 1],
                     s.nat[b + 2],
                     s.nat[b + 3] - launch_us,
                     s.nat[b + k_floor],
                     s.nat[b + k_softmax],
                     rows_library(p, b / k_per_family, out.warnings)};
    out.gpu.efficiency[static_cast<std::size_t>(ff.kind)][static_cast<std::size_t>(ff.precision)] = ff.efficiency;
    for (int k = 0; k < k_per_family; ++k) {
      const auto it = std::find(free.begin(), free.end(), b + k);
      ff.held[static_cast<std::size_t>(k)] = it == free.end();
      ff.standard_error[static_cast<std::size_t>(k)] = it == free.end() ? 0.0 : s.se[it - free.begin()];
    }
    if (s.nat[b] > 0.98) {
      out.warnings.push_back(
          fmt::format("{}: {:.3f}, at the datasheet peak: the kernels run as fast as the "
                      "preset's peak allows (is the peak right?)",
                      param_name(b), s.nat[b]));
    }
    if (s.nat[b + 1] > 0.98 * p.max_memory) {
      out.warnings.push_back(
          fmt::format("{}: {:.3f}, at the GPU's max_memory_efficiency {}: the kernels move "
                      "bytes as fast as the GPU can (L2-resident data? a fixed cost absorbed?)",
                      param_name(b + 1), s.nat[b + 1], p.max_memory));
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
  std::array<std::size_t, k_groups> count{};
  const Problem p = make_problem(base, table, options, ids, count);
  std::vector<int> free;
  const Eigen::VectorXd base_nat = start_families(base, p, count, options.min_rows, free, out);
  if (p.rows.size() <= free.size()) {
    throw core::Error(fmt::format("calibrate fit: {} kernel rows for {} parameters: measure more shapes", p.rows.size(),
                                  free.size()));
  }
  Eigen::VectorXd start = base_nat;
  for (const int j : free) {
    if (p.is_speed(j)) {
      continue;
    }
    if (j % k_per_family == 2 && start[j] <= 0.0) {  // a smooth knee where the base has a sharp max
      start[j] = 4.0;
    } else if (j % k_per_family == k_softmax && start[j] <= 0.0) {
      start[j] = 32.0;
    } else if (j % k_per_family == k_floor && start[j] <= 0.0) {
      // Just under the group's fastest body, so the smallest kernels tell whether a floor holds them.
      double least_us = 1e300;
      for (const Row& r : p.rows) {
        if (r.family == j / k_per_family) {
          least_us = std::min(least_us, r.measured_ns / 1e3 - base_nat[j - k_floor + 3]);
        }
      }
      start[j] = std::max(0.8 * least_us, 0.01);
    }
  }
  const Solution s = fit_with_floors(p, free, start, base_nat, options, out.warnings);
  add_held_out_errors(p, free, s.nat, options.folds, out.families);
  store_results(p, free, s, base.kernel_launch_us, out);
  if (p.gpus >= 2) {
    out.gpu_ids = ids;
  }
  return out;
}

}  // namespace epsim::calibration
