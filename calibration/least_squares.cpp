// SPDX-License-Identifier: Apache-2.0
#include "calibration/least_squares.hpp"

#include <Eigen/QR>
#include <algorithm>
#include <cmath>
#include <unsupported/Eigen/NonLinearOptimization>
#include <unsupported/Eigen/NumericalDiff>

namespace epsim::calibration {
namespace {

// The functor shape Eigen's NumericalDiff and LevenbergMarquardt expect.
struct Functor {
  using Scalar = double;
  using InputType = Eigen::VectorXd;
  using ValueType = Eigen::VectorXd;
  using JacobianType = Eigen::MatrixXd;
  enum { InputsAtCompileTime = Eigen::Dynamic, ValuesAtCompileTime = Eigen::Dynamic };

  const ResidualFn* f = nullptr;
  Eigen::Index n_inputs = 0;
  Eigen::Index n_values = 0;

  int inputs() const { return static_cast<int>(n_inputs); }
  int values() const { return static_cast<int>(n_values); }
  int operator()(const Eigen::VectorXd& x, Eigen::VectorXd& r) const {
    (*f)(x, r);
    return 0;
  }
};

}  // namespace

Eigen::VectorXd least_squares(const ResidualFn& residuals, Eigen::Index values, Eigen::VectorXd start) {
  if (start.size() == 0 || values < start.size()) {
    return start;
  }
  Functor f{&residuals, start.size(), values};
  Eigen::NumericalDiff<Functor> diff(f);
  Eigen::LevenbergMarquardt<Eigen::NumericalDiff<Functor>> lm(diff);
  lm.parameters.maxfev = static_cast<Eigen::Index>(400) * (start.size() + 1);
  lm.parameters.xtol = 1e-10;
  lm.parameters.ftol = 1e-12;
  lm.minimize(start);
  return start;
}

UndeterminedColumns undetermined_columns(const Eigen::MatrixXd& jacobian, double relative) {
  UndeterminedColumns out;
  const Eigen::Index cols = jacobian.cols();
  if (cols == 0) {
    return out;
  }
  const Eigen::VectorXd norms = jacobian.colwise().norm().transpose();
  const double largest = norms.maxCoeff();
  std::vector<Eigen::Index> used;
  for (Eigen::Index c = 0; c < cols; ++c) {
    (!(largest > 0.0) || !(norms[c] > relative * largest) ? out.unused : used).push_back(c);
  }
  if (used.empty()) {
    return out;
  }
  // Columns scaled to unit norm, so the rank test compares directions, not units.
  Eigen::MatrixXd scaled(jacobian.rows(), static_cast<Eigen::Index>(used.size()));
  for (std::size_t k = 0; k < used.size(); ++k) {
    scaled.col(static_cast<Eigen::Index>(k)) = jacobian.col(used[k]) / norms[used[k]];
  }
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(scaled);
  qr.setThreshold(std::sqrt(relative));
  const Eigen::Index rank = qr.rank();
  for (Eigen::Index k = rank; k < static_cast<Eigen::Index>(used.size()); ++k) {
    out.dependent.push_back(used[static_cast<std::size_t>(qr.colsPermutation().indices()[k])]);
  }
  std::sort(out.dependent.begin(), out.dependent.end());
  return out;
}

}  // namespace epsim::calibration
