// SPDX-License-Identifier: Apache-2.0
#pragma once
// DIRECTOR's polish after rounding: improving single-expert moves, pairwise swaps and exchanges of two
// GPUs' whole expert sets on one layer, each priced exactly (Eq. 1-4) and incrementally.
#include <span>

#include "policies/director/director_model.hpp"

namespace epsim::policies {

/// Improving single-expert moves, pairwise swaps and exchanges of two GPUs' whole expert sets on layer l
/// (exact Eq. 1-4), at most `sweeps` sweeps; returns the changes applied.
int polish_layer(const DirectorProblem& p, int l, std::span<int> gpu_of, int sweeps);

}  // namespace epsim::policies
