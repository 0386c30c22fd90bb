#include "sim/serving/serving_config.hpp"

#include <array>
#include <string_view>

namespace epsim::serving {

SchedulerConfig parse_scheduler(core::ParamTable& t) {
  SchedulerConfig c;
  c.max_batch_tokens = t.integer("max_batch_tokens", c.max_batch_tokens,
                                 "token budget of one step per DP rank (decodes + prefill chunks)", {1, 1 << 24});
  c.max_running_requests =
      t.integer("max_running_requests", c.max_running_requests, "requests admitted per DP rank at once", {1, 1 << 20});
  static constexpr std::array<std::string_view, 2> k_batching{"continuous", "static"};
  c.static_batching = t.choice("batching", "continuous",
                               "continuous: requests join and leave every step; static: a batch is admitted "
                               "when the group has nothing running and runs to completion (a preempted "
                               "request waits for the next)",
                               k_batching) == "static";
  c.kv_block_tokens = t.integer("kv_block_tokens", c.kv_block_tokens, "tokens per KV-cache block", {1, 4096});
  c.kv_watermark = t.real("kv_watermark", c.kv_watermark, "share of KV blocks admissions leave free", {0.0, 0.5});
  c.gpu_memory_utilization = t.real("gpu_memory_utilization", c.gpu_memory_utilization,
                                    "share of GPU memory for weights + KV cache", {0.0, 1.0, true});
  c.activation_reserve_gib = t.real("activation_reserve_gib", c.activation_reserve_gib,
                                    "memory kept per GPU for activations and workspaces, GiB", core::k_non_negative);
  return c;  // the caller reads the engine-level keys of the same table and calls finish()
}

SloConfig parse_slo(core::ParamTable& t) {
  SloConfig c;
  c.ttft_ms = t.real("ttft_ms", c.ttft_ms, "time-to-first-token target, ms", core::k_positive);
  c.tpot_ms = t.real("tpot_ms", c.tpot_ms, "time-per-output-token target (request mean), ms", core::k_positive);
  t.finish();
  return c;
}

}  // namespace epsim::serving
