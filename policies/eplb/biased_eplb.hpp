// SPDX-License-Identifier: Apache-2.0
#pragma once
// ROCm/ATOM's "biased" EPLB (atom/model_ops/eplb.py, PR #1210): the K = redundant slots / GPUs hottest
// experts of a layer get a replica on every GPU, so their tokens never leave the GPU that routed them;
// the other experts take the remaining slots by DeepSeek's replication and balanced packing (global, not
// hierarchical). ATOM measured it +34.0 % over EP without EPLB against +24.4 % for the reference algorithm
// with the same 64 redundant slots (DeepSeek-V4-Pro prefill on 8 MI355X).
#include <vector>

namespace epsim::policies::eplb {

/// One layer: `w` the experts' loads, `slots` = gpus x slots per GPU (>= experts, a multiple of gpus).
/// Outputs phy2log and the replica rank of every slot (slot s on GPU s / (slots / gpus)). Hot experts take
/// the first K slots of every GPU, replica rank = the GPU. Throws core::Error on a bad shape.
void biased_layer(const std::vector<float>& w, int slots, int gpus, std::vector<int>& phy2log, std::vector<int>& rank);

}  // namespace epsim::policies::eplb
