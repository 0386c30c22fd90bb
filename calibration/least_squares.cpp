#include "calibration/least_squares.hpp"

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

}  // namespace epsim::calibration
