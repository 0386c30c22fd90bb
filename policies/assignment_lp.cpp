// SPDX-License-Identifier: Apache-2.0
#include "policies/assignment_lp.hpp"

#include <fmt/format.h>

#include <coin/ClpSimplex.hpp>
#include <coin/CoinPackedMatrix.hpp>

#include "core/error.hpp"

namespace epsim::policies {

std::vector<int> max_value_assignment(std::span<const double> value, int n, std::string_view what) {
  const auto N = static_cast<std::size_t>(n);
  if (n < 1 || value.size() != N * N) {
    throw core::Error(fmt::format("{}: an assignment of {} needs {} x {} values, got {}", what, n, n, n, value.size()));
  }
  // Columns y[r][c] in [0, 1]; rows: each row of the problem takes one column, each column one row.
  std::vector<int> rows;
  std::vector<int> cols;
  std::vector<double> vals;
  for (std::size_t r = 0; r < N; ++r) {
    for (std::size_t c = 0; c < N; ++c) {
      const int col = static_cast<int>(r * N + c);
      rows.push_back(static_cast<int>(r));
      cols.push_back(col);
      rows.push_back(static_cast<int>(N + c));
      cols.push_back(col);
      vals.push_back(1.0);
      vals.push_back(1.0);
    }
  }
  const CoinPackedMatrix m(true, rows.data(), cols.data(), vals.data(), static_cast<CoinBigIndex>(vals.size()));
  std::vector<double> lo(N * N, 0.0);
  std::vector<double> hi(N * N, 1.0);
  std::vector<double> obj(N * N);
  for (std::size_t k = 0; k < N * N; ++k) {
    obj[k] = -value[k];  // Clp minimises
  }
  std::vector<double> one(2 * N, 1.0);
  ClpSimplex lp;
  lp.setLogLevel(0);
  lp.loadProblem(m, lo.data(), hi.data(), obj.data(), one.data(), one.data());
  lp.primal();
  if (!lp.isProvenOptimal()) {
    throw core::Error(fmt::format("{}: Clp failed on the assignment (status {})", what, lp.status()));
  }
  const double* y = lp.getColSolution();
  std::vector<int> col_of(N, -1);
  std::vector<bool> taken(N, false);
  for (std::size_t r = 0; r < N; ++r) {
    for (std::size_t c = 0; c < N; ++c) {
      if (y[r * N + c] > 0.5 && !taken[c]) {
        col_of[r] = static_cast<int>(c);
        taken[c] = true;
        break;
      }
    }
    if (col_of[r] < 0) {
      throw core::Error(fmt::format("{}: the assignment's optimum is not a permutation", what));
    }
  }
  return col_of;
}

}  // namespace epsim::policies
