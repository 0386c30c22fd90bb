// SPDX-License-Identifier: Apache-2.0
#pragma once
// The assignment problem (n rows to n columns, one to one, the largest total value) solved exactly as an
// LP in COIN-OR Clp: its polytope (Birkhoff's) has only permutation matrices as vertices, so the simplex
// optimum is integral. DIRECTOR's relabelling for overlap and MoETuner's cluster-to-GPU mapping use it.
#include <span>
#include <string_view>
#include <vector>

namespace epsim::policies {

/// `value[r * n + c]` (n x n, row-major) is what matching row r with column c is worth; returns the column
/// of each row in a matching of the largest total value. Throws core::Error naming `what` when Clp fails
/// or its optimum is not a permutation.
std::vector<int> max_value_assignment(std::span<const double> value, int n, std::string_view what);

}  // namespace epsim::policies
