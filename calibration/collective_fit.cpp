// SPDX-License-Identifier: Apache-2.0
#include "calibration/collective_fit.hpp"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>

#include "calibration/least_squares.hpp"
#include "core/error.hpp"

namespace epsim::calibration {
namespace {

constexpr double k_drag_min_error = 0.1;  // a group this close to the others' fit is not called mis-modelled

enum Param : int { overhead, intra_eff, intra_nvls, inter_latency, inter_eff, k_params };
constexpr std::array<const char*, k_params> k_names{"collective_overhead_us", "intra_node.efficiency",
                                                    "intra_node.nvls_gbps", "inter_node.latency_us",
                                                    "inter_node.efficiency"};

bool is_share(int j) {
  return j == intra_eff || j == inter_eff;
}

double to_natural(int j, double theta) {
  return is_share(j) ? 1.0 / (1.0 + std::exp(-theta)) : std::exp(theta);
}

double to_theta(int j, double nat) {
  if (is_share(j)) {
    const double e = std::clamp(nat, 1e-4, 1.0 - 1e-4);
    return std::log(e / (1.0 - e));
  }
  return std::log(std::max(nat, 1e-3));
}

hardware::ClusterSpec with(const hardware::ClusterSpec& base, const Eigen::VectorXd& nat) {
  hardware::ClusterSpec c = base;
  c.collective_overhead_us = nat[overhead];
  c.scale_up_link.efficiency = nat[intra_eff];
  c.scale_up_link.nvls_gbps = nat[intra_nvls];
  c.nic_link.latency_us = nat[inter_latency];
  c.nic_link.efficiency = nat[inter_eff];
  return c;
}

struct Fitter {
  const hardware::ClusterSpec& base;
  std::span<const Measurement> rows;  // collective rows only
  const CollectivePricer& price;

  double predict(std::size_t i, const Eigen::VectorXd& nat) const { return price(rows[i], with(base, nat)); }

  Eigen::VectorXd solve(const std::vector<std::size_t>& subset, const std::vector<int>& free,
                        const Eigen::VectorXd& start) const {
    const auto natural = [&](const Eigen::VectorXd& x) {
      Eigen::VectorXd nat = start;
      for (std::size_t i = 0; i < free.size(); ++i) {
        nat[free[i]] = to_natural(free[i], x[static_cast<Eigen::Index>(i)]);
      }
      return nat;
    };
    Eigen::VectorXd x(static_cast<Eigen::Index>(free.size()));
    for (std::size_t i = 0; i < free.size(); ++i) {
      x[static_cast<Eigen::Index>(i)] = to_theta(free[i], start[free[i]]);
    }
    const ResidualFn residuals = [&](const Eigen::VectorXd& theta, Eigen::VectorXd& r) {
      const Eigen::VectorXd nat = natural(theta);
      for (std::size_t i = 0; i < subset.size(); ++i) {
        r[static_cast<Eigen::Index>(i)] = std::log(predict(subset[i], nat) / rows[subset[i]].latency_us);
      }
    };
    return natural(least_squares(residuals, static_cast<Eigen::Index>(subset.size()), x));
  }

  // d log(predicted) / d log(parameter) of every row for the free parameters at `nat` (central differences).
  Eigen::MatrixXd jacobian(const std::vector<int>& free, const Eigen::VectorXd& nat) const {
    const auto n = static_cast<Eigen::Index>(rows.size());
    Eigen::MatrixXd j(n, static_cast<Eigen::Index>(free.size()));
    for (std::size_t c = 0; c < free.size(); ++c) {
      const double h = 1e-5 * std::max(std::abs(nat[free[c]]), 1e-6);
      Eigen::VectorXd up = nat;
      Eigen::VectorXd down = nat;
      up[free[c]] += h;
      down[free[c]] -= h;
      for (Eigen::Index i = 0; i < n; ++i) {
        const auto r = static_cast<std::size_t>(i);
        j(i, static_cast<Eigen::Index>(c)) =
            (std::log(predict(r, up)) - std::log(predict(r, down))) / (2.0 * h) * std::abs(nat[free[c]]);
      }
    }
    return j;
  }

  // Relative standard errors of the free parameters at `nat` from their Jacobian `j` (residual variance);
  // j has full column rank (the caller held the undetermined columns).
  Eigen::VectorXd standard_errors(const Eigen::MatrixXd& j, const Eigen::VectorXd& nat) const {
    double rss = 0.0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      rss += std::pow(std::log(predict(i, nat) / rows[i].latency_us), 2);
    }
    const Eigen::MatrixXd a = j.transpose() * j;
    const double dof = std::max(1.0, static_cast<double>(rows.size()) - static_cast<double>(j.cols()));
    const Eigen::FullPivLU<Eigen::MatrixXd> lu(a);
    if (!lu.isInvertible()) {
      return Eigen::VectorXd::Constant(j.cols(), 1e9);
    }
    return (lu.inverse().diagonal() * (rss / dof)).cwiseAbs().cwiseSqrt();
  }
};

// Holds the free parameters the rows cannot determine (no row depends on them, or they are combinations of
// the others: least_squares.hpp), each named in a warning with the reason; true when it held any. Left free,
// they would make every standard error unbounded and get the determined parameters held too.
bool hold_undetermined(const Eigen::MatrixXd& j, std::vector<int>& free, CollectiveFit& out) {
  const UndeterminedColumns u = undetermined_columns(j);
  std::vector<Eigen::Index> held;
  for (const Eigen::Index c : u.unused) {
    out.warnings.push_back(
        fmt::format("{}: no row of the table depends on it (the model's time does not move with it at the fit): "
                    "held at the base cluster's value",
                    k_names[static_cast<std::size_t>(free[static_cast<std::size_t>(c)])]));
    held.push_back(c);
  }
  for (const Eigen::Index c : u.dependent) {
    out.warnings.push_back(
        fmt::format("{}: the rows cannot tell it apart from the other parameters (they move the times together): "
                    "held at the base cluster's value",
                    k_names[static_cast<std::size_t>(free[static_cast<std::size_t>(c)])]));
    held.push_back(c);
  }
  std::sort(held.begin(), held.end(), std::greater<>());
  for (const Eigen::Index c : held) {
    free.erase(free.begin() + c);
  }
  return !held.empty();
}

std::string group_name(const Measurement& m) {
  return fmt::format("{} {}", op_name(m.op), crosses_nodes(m) ? "across nodes" : "within a node");
}

CollectiveFitGroup& group_of(std::vector<CollectiveFitGroup>& groups, const std::string& name) {
  for (CollectiveFitGroup& g : groups) {
    if (g.name == name) {
      return g;
    }
  }
  groups.push_back({name, {}, {}, {}});
  return groups.back();
}

double mape_of(const Fitter& fitter, const std::vector<std::size_t>& subset, const Eigen::VectorXd& nat) {
  ErrorSummary e;
  for (const std::size_t i : subset) {
    add_error(e, fitter.predict(i, nat), fitter.rows[i].latency_us);
  }
  return e.mape;
}

// A group that one set of cluster numbers cannot price together with the others (measured with another
// algorithm than the run models, say) drags every shared parameter toward itself. Fitted without it, the
// others then fit at least twice as well, and it is off their fit by a multiple of their error: named.
void warn_dragging_groups(const Fitter& fitter, const std::vector<int>& free, const Eigen::VectorXd& nat,
                          CollectiveFit& out) {
  std::vector<std::string> names;
  for (const Measurement& m : fitter.rows) {
    if (std::find(names.begin(), names.end(), group_name(m)) == names.end()) {
      names.push_back(group_name(m));
    }
  }
  if (names.size() < 2 || free.empty()) {
    return;
  }
  for (const std::string& name : names) {
    std::vector<std::size_t> in;
    std::vector<std::size_t> rest;
    for (std::size_t i = 0; i < fitter.rows.size(); ++i) {
      (group_name(fitter.rows[i]) == name ? in : rest).push_back(i);
    }
    if (rest.size() <= free.size()) {
      continue;
    }
    const Eigen::VectorXd without = fitter.solve(rest, free, nat);
    const double rest_joint = mape_of(fitter, rest, nat);
    const double rest_alone = mape_of(fitter, rest, without);
    const double off = mape_of(fitter, in, without);
    if (rest_alone < 0.5 * rest_joint && off > std::max(3.0 * rest_alone, k_drag_min_error)) {
      out.warnings.push_back(fmt::format(
          "{}: the model does not fit it together with the other collectives: fitted without it, the others are "
          "off by {:.1f} % (MAPE; {:.1f} % with it) and it by {:.1f} %: it drags the joint fit (was it measured with "
          "the algorithm the run models? fit it from a table of its own)",
          name, 100.0 * rest_alone, 100.0 * rest_joint, 100.0 * off));
    }
  }
}

}  // namespace

bool crosses_nodes(const Measurement& row) {
  return row.gpus > row.gpus_per_node;
}

CollectiveFit fit_collectives(const hardware::ClusterSpec& base, std::span<const Measurement> table,
                              const CollectivePricer& price, int folds, double poorly_determined) {
  std::vector<Measurement> rows;
  bool intra = false;
  bool inter = false;
  for (const Measurement& m : table) {
    if (op_info(m.op).collective) {
      rows.push_back(m);
      (crosses_nodes(m) ? inter : intra) = true;
    }
  }
  if (rows.empty()) {
    throw core::Error("calibrate fit: the table has no collective rows (all_to_all, all_reduce, send_recv)");
  }
  const Fitter fitter{base, rows, price};
  Eigen::VectorXd start(k_params);
  start << base.collective_overhead_us, base.scale_up_link.efficiency, base.scale_up_link.nvls_gbps,
      base.nic_link.latency_us, base.nic_link.efficiency;
  // What the rows can tell apart: without rows inside a node, the fixed cost and the network latency are
  // one intercept, carried by the fixed cost.
  std::vector<int> free;
  if (intra) {
    free = {overhead, intra_eff};
    if (base.scale_up_link.nvls_gbps > 0.0) {
      free.push_back(intra_nvls);  // NVLink SHARP: all-reduces inside a node may run on it
    }
  }
  if (inter) {
    free.push_back(inter_eff);
    free.push_back(intra ? inter_latency : overhead);
  }
  CollectiveFit out;
  if (rows.size() <= free.size()) {
    throw core::Error(fmt::format("calibrate fit: {} collective rows for {} parameters: measure more sizes",
                                  rows.size(), free.size()));
  }
  std::vector<std::size_t> all(rows.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    all[i] = i;
  }
  Eigen::VectorXd nat;
  Eigen::VectorXd se;
  for (;;) {
    nat = fitter.solve(all, free, start);
    const Eigen::MatrixXd j = fitter.jacobian(free, nat);
    if (hold_undetermined(j, free, out)) {
      if (free.empty()) {
        nat = start;
        se.resize(0);
        break;
      }
      continue;  // refit without them: they stay at the base's values
    }
    se = fitter.standard_errors(j, nat);
    Eigen::Index worst = -1;
    for (Eigen::Index c = 0; c < se.size(); ++c) {
      if (se[c] > poorly_determined && (worst < 0 || se[c] > se[worst])) {
        worst = c;
      }
    }
    if (worst < 0) {
      break;
    }
    const int h = free[static_cast<std::size_t>(worst)];
    out.warnings.push_back(
        fmt::format("{}: poorly determined by the table (relative standard error {:.0f} %): held "
                    "at the base cluster's value",
                    k_names[static_cast<std::size_t>(h)], std::min(1e6, 100.0 * se[worst])));
    free.erase(free.begin() + worst);
    if (free.empty()) {
      nat = start;
      se.resize(0);
      break;
    }
  }
  out.cluster = with(base, nat);
  for (int j = 0; j < k_params; ++j) {
    const auto it = std::find(free.begin(), free.end(), j);
    const bool held = it == free.end();
    out.params.push_back(
        {k_names[static_cast<std::size_t>(j)], start[j], nat[j], held ? 0.0 : se[it - free.begin()], held});
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    CollectiveFitGroup& g = group_of(out.groups, group_name(rows[i]));
    add_error(g.before, fitter.predict(i, start), rows[i].latency_us);
    add_error(g.in_sample, fitter.predict(i, nat), rows[i].latency_us);
  }
  warn_dragging_groups(fitter, free, nat, out);
  // k-fold held-out errors: row i is in fold i mod k.
  for (int fold = 0; fold < folds; ++fold) {
    std::vector<std::size_t> train;
    std::vector<std::size_t> test;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      (static_cast<int>(i % static_cast<std::size_t>(folds)) == fold ? test : train).push_back(i);
    }
    if (test.empty() || train.size() <= free.size()) {
      continue;
    }
    const Eigen::VectorXd fold_nat = fitter.solve(train, free, nat);
    for (const std::size_t i : test) {
      add_error(group_of(out.groups, group_name(rows[i])).held_out, fitter.predict(i, fold_nat), rows[i].latency_us);
    }
  }
  return out;
}

}  // namespace epsim::calibration
