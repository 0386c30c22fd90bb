// SPDX-License-Identifier: Apache-2.0
#pragma once
// GRACE-MoE (paper 004, Section 4 and Figure 2a): the expert affinity matrix of one MoE layer, A[i][j] =
// the number of tokens that selected both expert i and expert j in their top-k (co-selection counts).
// Symmetric, zero diagonal. The paper does not normalise A, and nothing downstream needs it: the
// spectral step uses the normalised Laplacian, U(r) is a ratio and Algorithm 2 only compares sums, all
// invariant to scaling A; so raw counts are kept (divide by the token count for frequencies if wanted).
#include <Eigen/Dense>
#include <span>
#include <vector>

namespace epsim::policies {

using AffinityMatrix = Eigen::MatrixXd;  ///< E x E, symmetric, zero diagonal, non-negative

/// Adds one token's top-k selection to `counts` (E x E row-major co-selection counts): +1 to [i][j]
/// and [j][i] for every pair i != j of distinct experts it selected. Ids -1 (no selection) are skipped.
void add_coselection(std::span<double> counts, int num_experts, std::span<const int> token_topk);

/// Co-selection counts of `topk` (tokens x top_k expert ids, row-major, -1 = none). Throws core::Error
/// on a size that is not a multiple of top_k or an id out of range.
AffinityMatrix affinity_from_topk(std::span<const int> topk, int top_k, int num_experts);

/// The affinity of E x E row-major co-selection counts (e.g. a layer of PlacementInput::coactivation):
/// symmetrised as (C + C^T) / 2, diagonal zeroed. Throws core::Error on a wrong size or a negative or
/// non-finite entry.
AffinityMatrix affinity_from_counts(std::span<const double> counts, int num_experts);

}  // namespace epsim::policies
