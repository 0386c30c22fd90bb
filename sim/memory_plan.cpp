// SPDX-License-Identifier: Apache-2.0
#include "sim/memory_plan.hpp"

#include <cmath>

#include "models/layer_work.hpp"

namespace epsim::serving {

MemoryPlan plan_memory(const models::ModelSpec& model, const hardware::GpuSpec& gpu, int slots_per_gpu,
                       const SchedulerConfig& sched, int attention_tp) {
  return plan_memory_for_experts(model, gpu,
                                 static_cast<double>(slots_per_gpu) * static_cast<double>(model.num_moe_layers()),
                                 sched, attention_tp);
}

MemoryPlan plan_memory_for_experts(const models::ModelSpec& model, const hardware::GpuSpec& gpu, double expert_copies,
                                   const SchedulerConfig& sched, int attention_tp) {
  constexpr double gib = 1024.0 * 1024.0 * 1024.0;
  const double tp = static_cast<double>(attention_tp);
  MemoryPlan p;
  // Routers and shared experts stay whole on every GPU; the rest of the non-expert weights are split.
  const double moe_layers = static_cast<double>(model.num_moe_layers());
  const double replicated =
      moe_layers * static_cast<double>(model.hidden_size * model.routed_experts) * model.weight_bytes() +
      (model.shared_intermediate_size == 0
           ? moe_layers * static_cast<double>(model.shared_experts) * models::expert_weight_bytes(model)
           : moe_layers * models::shared_expert_weight_bytes(model));
  const double split = models::non_expert_weight_bytes(model) - replicated;
  const double weights = split / tp + replicated + expert_copies * models::expert_weight_bytes(model);
  p.weights_gib = weights / gib;
  p.kv_gib = gpu.memory_gib * sched.gpu_memory_utilization - p.weights_gib - sched.activation_reserve_gib;
  p.kv_bytes_per_token = models::growing_kv_bytes_per_token(model);
  p.state_bytes_per_request = models::state_bytes_per_request(model);
  const bool split_kv = model.attention == models::AttentionKind::gqa && model.num_kv_heads % attention_tp == 0;
  // Bytes one token takes on each GPU of its rank; the rank's blocks are bounded by one GPU's memory.
  const double per_gpu_token = split_kv ? p.kv_bytes_per_token / tp : p.kv_bytes_per_token;
  const double block_bytes = per_gpu_token * static_cast<double>(sched.kv_block_tokens);
  p.kv_blocks = p.kv_gib > 0.0 ? static_cast<std::int64_t>(std::floor(p.kv_gib * gib / block_bytes)) : 0;
  // A request's fixed state in whole blocks of the same pool (vLLM's hybrid allocator pads its groups'
  // pages to one size); linear states are split by heads like a GQA cache.
  const double per_gpu_state = split_kv ? p.state_bytes_per_request / tp : p.state_bytes_per_request;
  p.state_blocks_per_request = static_cast<std::int64_t>(std::ceil(per_gpu_state / block_bytes));
  return p;
}

}  // namespace epsim::serving
