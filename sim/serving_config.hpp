// SPDX-License-Identifier: Apache-2.0
#pragma once
// Configuration of the serving engine: batching budgets, SLO targets, EP grouping, run limits.
#include <cstdint>

#include <optional>
#include <string>

#include "core/params.hpp"
#include "hardware/gpu_spec.hpp"
#include "sim/prefix_cache_config.hpp"
#include "sim/speculative_config.hpp"

namespace epsim::serving {

struct SchedulerConfig {
  std::int64_t max_batch_tokens = 8192;     ///< tokens per DP rank per step (decodes + prefill chunks)
  std::int64_t max_running_requests = 256;  ///< requests admitted per DP rank at once
  std::int64_t kv_block_tokens = 16;        ///< tokens per KV-cache block (paged attention)
  double kv_watermark = 0.01;               ///< admissions leave this share of the blocks free
  double gpu_memory_utilization = 0.9;      ///< share of GPU memory for weights + KV cache (vLLM's knob)
  double activation_reserve_gib = 1.0;      ///< memory kept for activations and workspaces, per GPU
  /// Static batching: new requests are admitted only when the whole group has none running (a batch runs
  /// to completion, as in offline batch inference and DIRECTOR's batch-level serving; a preempted request
  /// leaves its batch for the next), each only while the rank's cache holds the whole context of every
  /// request admitted with it; else continuous.
  bool static_batching = false;
};

struct SloConfig {
  double ttft_ms = 2000.0;  ///< time-to-first-token target
  double tpot_ms = 100.0;   ///< time-per-output-token target (per-request mean)
};

enum class LoadBalancer : std::uint8_t { round_robin, least_outstanding, cache_aware };

/// load_balancer = "cache_aware" (SGLang router's cache-aware policy, its defaults): over every DP rank of
/// the pools that take arrivals, the least loaded when the load is imbalanced (max - min outstanding above
/// balance_abs_threshold and max above balance_rel_threshold x min); else the rank whose prefix cache
/// holds the longest start of the prompt when that covers more than cache_threshold of it; else the rank
/// whose cache holds the fewest blocks (the most room).
struct CacheAwareConfig {
  double cache_threshold = 0.5;
  std::int64_t balance_abs_threshold = 32;
  double balance_rel_threshold = 1.0001;
};

/// Requests arriving, and steps starting, in [warmup_s, last arrival - cooldown_s] are measured.
struct MetricsWindow {
  double warmup_s = 0.0;
  double cooldown_s = 0.0;
};

struct ServingConfig {
  MetricsWindow window;
  SchedulerConfig scheduler;
  LoadBalancer load_balancer = LoadBalancer::round_robin;  ///< how requests are spread over EP groups
  CacheAwareConfig cache_aware;
  PrefixCacheConfig prefix_cache;
  SloConfig slo;
  double step_overhead_us = 0.0;   ///< fixed CPU/scheduling time added to every step
  double max_sim_time_s = 3600.0;  ///< hard stop of simulated time (unfinished requests are reported)
  std::int64_t max_steps = 0;      ///< hard stop after this many steps over all groups (0 = none)
  SpeculativeConfig speculative;   ///< [speculative]: off unless a method is set
};

/// Disaggregated prefill / decode pools (prefill_groups = 0: co-located).
struct DisaggregationConfig {
  int prefill_groups = 0;                        ///< the first EP groups form the prefill pool
  int prefill_ep_size = 0;                       ///< GPUs per prefill group (parsed: 0 becomes ep_size)
  std::optional<hardware::GpuSpec> prefill_gpu;  ///< the prefill pool's GPU model, when it differs
  std::string handoff = "least_loaded";          ///< handoff_registry() entry: picks each hand-off's decode rank
};

/// The cluster and model facts the serving sections are checked against.
struct ServingShape {
  int gpus = 0;
  int gpus_per_node = 0;
  std::int64_t routed_experts = 0;
};

/// [parallel]: the shorthand's one EP size, and every pool's defaults.
struct ParallelConfig {
  int ep_size = 0;            ///< GPUs per EP group (shorthand only; parsed: 0 becomes the cluster's GPUs)
  int attention_tp = 1;       ///< GPUs per attention rank (1 = DP attention: one rank per GPU)
  int redundant_experts = 0;  ///< extra expert slots per EP group beyond one per logical expert
};

/// Everything the serving sections of an experiment say (the pools themselves: pool_config.hpp).
struct ServingSections {
  ServingConfig serving;
  ParallelConfig parallel;
  DisaggregationConfig disaggregation;  ///< the shorthand's two pools (unused with [[pool]])
  bool pool_list = false;               ///< the config gives [[pool]] entries
};

SchedulerConfig parse_scheduler(core::ParamTable& t);
SloConfig parse_slo(core::ParamTable& t);
/// Reads and finishes [parallel], [scheduler], [disaggregation], [metrics], [slo] and [speculative] of `root` (with
/// [[pool]] entries, [parallel] gives only defaults and [disaggregation] is refused).
ServingSections parse_serving_sections(core::ParamTable& root, const ServingShape& shape);

}  // namespace epsim::serving
