// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where a GPU's memory goes under DP attention + EP MoE: every rank holds all non-expert weights
// (attention, dense layers, shared experts, routers, embedding, LM head) and its expert slots (redundant
// replicas included, even empty slots reserve their space); what is left of
// memory x gpu_memory_utilization after weights and the activation reserve is the paged KV cache.
#include <cstdint>

#include "hardware/gpu_spec.hpp"
#include "models/model_spec.hpp"
#include "sim/serving_config.hpp"

namespace epsim::serving {

struct MemoryPlan {
  double weights_gib = 0.0;                   ///< per GPU
  double kv_gib = 0.0;                        ///< per GPU (may be negative: the weights do not fit)
  double kv_bytes_per_token = 0.0;            ///< the layers whose KV grows with the context (full, chunked)
  double state_bytes_per_request = 0.0;       ///< sliding windows and linear states (models/layer_work.hpp)
  std::int64_t kv_blocks = 0;                 ///< per DP attention rank
  std::int64_t state_blocks_per_request = 0;  ///< blocks each admitted request holds for its fixed state
  std::int64_t kv_tokens() const { return kv_blocks; }
};

/// With tensor-parallel attention over `attention_tp` GPUs, attention, dense FFN, embedding and LM head
/// weights are split over them, and so is a GQA KV cache (by KV heads, when they divide); an MLA latent
/// cache is not split. `kv_blocks` is then per attention rank (all its GPUs together).
MemoryPlan plan_memory(const models::ModelSpec& model, const hardware::GpuSpec& gpu, int slots_per_gpu,
                       const SchedulerConfig& sched, int attention_tp = 1);
/// The same for a GPU holding `expert_copies` routed-expert weights over all MoE layers together (a
/// placement that leaves slots empty for good: only what it fills takes memory, e.g. GRACE's replicas).
MemoryPlan plan_memory_for_experts(const models::ModelSpec& model, const hardware::GpuSpec& gpu, double expert_copies,
                                   const SchedulerConfig& sched, int attention_tp = 1);

}  // namespace epsim::serving
