// SPDX-License-Identifier: Apache-2.0
#pragma once
// Nonlinear least squares for the fits: Eigen's Levenberg-Marquardt (MINPACK's lmdif) with a forward
// difference Jacobian, over a residual function given as a closure, so each fit states only its model.
#include <Eigen/Core>
#include <functional>
#include <vector>

namespace epsim::calibration {

/// Fills `residuals` (already sized to the number of values) for parameters `x`.
using ResidualFn = std::function<void(const Eigen::VectorXd& x, Eigen::VectorXd& residuals)>;

/// The `x` minimising the sum of squared residuals, from `start`; `values` residuals, at least as many
/// as parameters (else `start` is returned unchanged).
Eigen::VectorXd least_squares(const ResidualFn& residuals, Eigen::Index values, Eigen::VectorXd start);

/// Which parameters (columns of a Jacobian, rows x parameters) the rows cannot determine. A fit should hold
/// them at a prior value and fit the rest: left free, one undetermined column makes J^T J singular and every
/// parameter's standard error unbounded.
struct UndeterminedColumns {
  /// No row depends on them: the column's norm is at most `relative` x the largest column's (or zero).
  std::vector<Eigen::Index> unused;
  /// The rest, beyond the Jacobian's numerical rank: combinations of the other columns (QR with column
  /// pivoting keeps the best-determined ones).
  std::vector<Eigen::Index> dependent;
};
UndeterminedColumns undetermined_columns(const Eigen::MatrixXd& jacobian, double relative = 1e-8);

}  // namespace epsim::calibration
