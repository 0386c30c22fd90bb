// SPDX-License-Identifier: Apache-2.0
#pragma once
// DIRECTOR online: from the re-optimised placement to the one worth migrating to. Re-solving Eq. 5 from
// scratch ignores where experts are now, and GPUs that are alike make many optima that differ only by
// which GPU is which: taken as they come, nearly every expert would move at every re-optimisation
// (measured: ~1,000 of DeepSeek-V2-Lite's 1,664 experts per re-optimisation on 4 GPUs). Per layer:
//  1. the new layer's GPUs are relabelled to keep the most experts where they are (a maximum-overlap
//     assignment of new GPU sets to current GPUs, an integral LP solved with Clp); the relabelled layer
//     is taken when its Eq. 1-4 cost is no higher than the unrelabelled one's (always, for alike GPUs
//     and origin-blind W);
//  2. candidates from the fewest moves up: the current layer; the current layer improved under the new
//     W by the rounding's polish (`polish_sweeps` sweeps); the new layer. One with
//     more moves is taken only when it saves at least `min_gain` of the Eq. 1-4 cost of the one chosen
//     so far: a move is made only for a gain worth its migration, and the migration stays short enough
//     to finish before the work it was made for.
// Not in the paper, which does not say how the rounded placement is matched to the deployed one.
#include <span>
#include <vector>

#include "policies/director/director_model.hpp"

namespace epsim::policies {

struct ReconfigureResult {
  std::vector<int> gpu_of;    ///< [layer][expert] -> GPU: the placement to migrate to
  int layers_kept = 0;        ///< layers left as they are (too little gain)
  int layers_polished = 0;    ///< layers changed by a few moves and swaps from the current one
  int layers_relabelled = 0;  ///< layers changed to the new placement with its GPUs renamed
  int experts_moved = 0;      ///< experts whose GPU changes
};

/// Maximum-overlap relabelling of one layer: returns `next_gpu_of` with each GPU g renamed to perm[g],
/// perm the permutation maximising the experts that stay on their current GPU.
std::vector<int> relabel_for_overlap(std::span<const int> current_gpu_of, std::span<const int> next_gpu_of, int gpus);

/// Steps 1-2 for every layer. `current_gpu_of` and `next_gpu_of` are [layer][expert] -> GPU, both within
/// C_max; `polish_sweeps` = 0 leaves the polished candidate out. Throws core::Error on mismatched shapes.
ReconfigureResult reconfigure(const DirectorProblem& p, std::span<const int> current_gpu_of,
                              std::span<const int> next_gpu_of, double min_gain, int polish_sweeps = 4);

}  // namespace epsim::policies
