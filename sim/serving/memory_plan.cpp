#include "sim/serving/memory_plan.hpp"

#include <cmath>

#include "models/layer_work.hpp"

namespace epsim::serving {

MemoryPlan plan_memory(const models::ModelSpec& model, const hardware::GpuSpec& gpu, int slots_per_gpu,
                       const SchedulerConfig& sched) {
  constexpr double gib = 1024.0 * 1024.0 * 1024.0;
  MemoryPlan p;
  const double weights = models::non_expert_weight_bytes(model) + static_cast<double>(slots_per_gpu) *
                                                                      static_cast<double>(model.num_moe_layers()) *
                                                                      models::expert_weight_bytes(model);
  p.weights_gib = weights / gib;
  p.kv_gib = gpu.memory_gib * sched.gpu_memory_utilization - p.weights_gib - sched.activation_reserve_gib;
  p.kv_bytes_per_token = static_cast<double>(model.num_layers) * models::kv_bytes_per_token_layer(model);
  const double block_bytes = p.kv_bytes_per_token * static_cast<double>(sched.kv_block_tokens);
  p.kv_blocks = p.kv_gib > 0.0 ? static_cast<std::int64_t>(std::floor(p.kv_gib * gib / block_bytes)) : 0;
  return p;
}

}  // namespace epsim::serving
