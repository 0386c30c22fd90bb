#pragma once
// Nonlinear least squares for the fits: Eigen's Levenberg-Marquardt (MINPACK's lmdif) with a forward
// difference Jacobian, over a residual function given as a closure, so each fit states only its model.
#include <Eigen/Core>
#include <functional>

namespace epsim::calibration {

/// Fills `residuals` (already sized to the number of values) for parameters `x`.
using ResidualFn = std::function<void(const Eigen::VectorXd& x, Eigen::VectorXd& residuals)>;

/// The `x` minimising the sum of squared residuals, from `start`; `values` residuals, at least as many
/// as parameters (else `start` is returned unchanged).
Eigen::VectorXd least_squares(const ResidualFn& residuals, Eigen::Index values, Eigen::VectorXd start);

}  // namespace epsim::calibration
