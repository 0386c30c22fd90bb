// SPDX-License-Identifier: Apache-2.0
#include "core/lane_math.hpp"

#include <array>

namespace epsim::core::lane {

double log_one(double x) {
  return log(Vd2{} + x)[0];
}
double exp_one(double x) {
  return exp(Vd2{} + x)[0];
}
double log_factorial_one(double k) {
  return log_factorial(Vd2{} + k, log_factorial_table())[0];
}
double floor_one(double x) {
  return floor(Vd2{} + x)[0];
}

const double* log_factorial_table() {
  static const std::array<double, k_factorial_table> table = [] {
    std::array<double, k_factorial_table> t{};
    for (int k = 2; k < k_factorial_table; ++k) {
      t[static_cast<std::size_t>(k)] = t[static_cast<std::size_t>(k - 1)] + log_one(k);
    }
    return t;
  }();
  return table.data();
}

}  // namespace epsim::core::lane
