// SPDX-License-Identifier: Apache-2.0
#include "sim/serving_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>

#include "core/presets.hpp"
#include "sim/handoff_router.hpp"
#include "sim/pool_config.hpp"

namespace epsim::serving {

SchedulerConfig parse_scheduler(core::ParamTable& t) {
  SchedulerConfig c;
  c.max_batch_tokens = t.integer("max_batch_tokens", c.max_batch_tokens,
                                 "token budget of one step per DP rank (decodes + prefill chunks)", {1, 1 << 24});
  c.max_running_requests =
      t.integer("max_running_requests", c.max_running_requests, "requests admitted per DP rank at once", {1, 1 << 20});
  static constexpr std::array<core::Choice<bool>, 2> k_batching{{{"continuous", false}, {"static", true}}};
  c.static_batching = t.choice<bool>("batching", false,
                                     "continuous: requests join and leave every step; static: a batch is admitted "
                                     "when the group has nothing running and runs to completion (a preempted "
                                     "request waits for the next)",
                                     k_batching);
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

// An EP group either fits in a node (dividing it) or spans whole nodes: groups never share a node unevenly.
void check_group_fits_nodes(const core::ParamTable& t, std::string_view key, int ep_size, int gpus_per_node) {
  if (ep_size > gpus_per_node && ep_size % gpus_per_node != 0) {
    t.fail(key, fmt::format("an EP group larger than a node must span whole nodes ({} GPUs each), got {}",
                            gpus_per_node, ep_size));
  }
  if (ep_size < gpus_per_node && gpus_per_node % ep_size != 0) {
    t.fail(key, fmt::format("an EP group inside a node must divide its {} GPUs, got {}", gpus_per_node, ep_size));
  }
}

namespace {

void parse_parallel(core::ParamTable& root, const ServingShape& shape, ServingSections& out) {
  auto parallel = root.table("parallel", "parallelism");
  ParallelConfig& par = out.parallel;
  par.ep_size = static_cast<int>(parallel.integer(
      "ep_size", 0,
      "GPUs per expert-parallel group (0 = all GPUs; with [[pool]]: the pools' default, 0 = each pool's gpus)",
      {0, 1 << 20}));
  par.redundant_experts = static_cast<int>(parallel.integer(
      "redundant_experts", 0, "extra expert slots per EP group (EPLB redundancy); every pool's default", {0, 1 << 16}));
  par.attention_tp = static_cast<int>(
      parallel.integer("attention_tp", 1,
                       "GPUs per attention rank: 1 = DP attention, > 1 = tensor-parallel attention; every pool's "
                       "default",
                       {1, 1024}));
  static constexpr std::array<core::Choice<LoadBalancer>, 3> k_balancers{
      {{"round_robin", LoadBalancer::round_robin},
       {"least_outstanding", LoadBalancer::least_outstanding},
       {"cache_aware", LoadBalancer::cache_aware}}};
  out.serving.load_balancer = parallel.choice<LoadBalancer>(
      "load_balancer", LoadBalancer::round_robin,
      "how arriving requests are spread: over EP groups (round_robin, least_outstanding; then the group's least "
      "loaded DP rank), or over every DP rank by prefix match and load (cache_aware: SGLang router's policy, "
      "needs prefix_cache.enabled)",
      k_balancers);
  auto aware = parallel.table("cache_aware", "load_balancer = \"cache_aware\"'s thresholds (SGLang router defaults)");
  CacheAwareConfig& ca = out.serving.cache_aware;
  ca.cache_threshold =
      aware.real("cache_threshold", ca.cache_threshold,
                 "a prefix match above this share of the prompt picks the rank holding it", {0.0, 1.0});
  ca.balance_abs_threshold =
      aware.integer("balance_abs_threshold", ca.balance_abs_threshold,
                    "load counts as imbalanced (the least loaded rank wins) when max - min outstanding exceeds this "
                    "and max exceeds balance_rel_threshold x min",
                    {0, 1 << 20});
  ca.balance_rel_threshold =
      aware.real("balance_rel_threshold", ca.balance_rel_threshold, "see balance_abs_threshold", {1.0, 1e6});
  aware.finish();
  if (out.pool_list) {
    parallel.finish();
    return;  // each pool's sizes are checked with it (pool_config.cpp)
  }
  if (par.ep_size == 0) {
    par.ep_size = shape.gpus;
  }
  // With a prefill pool of its own EP size, ep_size needs to divide only the decode pool's GPUs: that
  // is checked with [disaggregation]. Otherwise here, first, as always.
  const bool pools_may_differ =
      root.table("disaggregation", "separate prefill and decode pools (shorthand for two [[pool]] entries)")
          .contains("prefill_ep_size");
  if (!pools_may_differ && shape.gpus % par.ep_size != 0) {
    parallel.fail("ep_size", fmt::format("must divide the cluster's {} GPUs, got {}", shape.gpus, par.ep_size));
  }
  check_group_fits_nodes(parallel, "ep_size", par.ep_size, shape.gpus_per_node);
  if ((shape.routed_experts + par.redundant_experts) % par.ep_size != 0) {
    parallel.fail("redundant_experts",
                  fmt::format("routed experts + redundant slots ({} + {}) must divide evenly over ep_size = {} GPUs",
                              shape.routed_experts, par.redundant_experts, par.ep_size));
  }
  if (par.ep_size % par.attention_tp != 0 || std::min(par.ep_size, shape.gpus_per_node) % par.attention_tp != 0) {
    parallel.fail("attention_tp", fmt::format("must divide ep_size ({}) and stay inside a node ({} GPUs), got {}",
                                              par.ep_size, shape.gpus_per_node, par.attention_tp));
  }
  parallel.finish();
}

void parse_disaggregation(core::ParamTable& root, const ServingShape& shape, ServingSections& out) {
  auto disagg = root.table("disaggregation", "separate prefill and decode pools (shorthand for two [[pool]] entries)");
  if (out.pool_list && root.contains("disaggregation")) {
    root.fail("disaggregation",
              "[disaggregation] is the shorthand for a prefill and a decode pool; with [[pool]] entries give each "
              "pool's role (\"prefill\", \"decode\"), gpus, ep_size, gpu and handoff_to instead");
  }
  if (out.pool_list) {
    return;
  }
  DisaggregationConfig& d = out.disaggregation;
  const int ep = out.parallel.ep_size;
  d.prefill_groups = static_cast<int>(disagg.integer(
      "prefill_groups", 0, "EP groups in the prefill pool (the first ones); 0 = prefill and decode co-located",
      {0, 1 << 20}));
  d.prefill_ep_size = static_cast<int>(
      disagg.integer("prefill_ep_size", 0,
                     "GPUs per EP group of the prefill pool (0 = parallel.ep_size); the decode pool keeps "
                     "parallel.ep_size",
                     {0, 1 << 20}));
  const bool own_size = d.prefill_groups > 0 && d.prefill_ep_size > 0 && d.prefill_ep_size != ep;
  if (d.prefill_ep_size == 0) {
    d.prefill_ep_size = ep;
  }
  const std::string prefill_gpu =
      disagg.string("prefill_gpu", "", "GPU preset of the prefill pool (default: the cluster's)");
  if (!own_size) {
    // One EP size for every group: it tiles the whole cluster.
    if (shape.gpus % ep != 0) {
      root.table("parallel", "parallelism")
          .fail("ep_size", fmt::format("must divide the cluster's {} GPUs, got {}", shape.gpus, ep));
    }
    const int groups = shape.gpus / ep;
    if (d.prefill_groups > 0 && d.prefill_groups >= groups) {
      disagg.fail("prefill_groups", fmt::format("must leave at least one of the {} EP groups for decoding, got {}",
                                                groups, d.prefill_groups));
    }
  } else {
    const int k = d.prefill_ep_size;
    check_group_fits_nodes(disagg, "prefill_ep_size", k, shape.gpus_per_node);
    const std::int64_t prefill_gpus = static_cast<std::int64_t>(d.prefill_groups) * k;
    if (prefill_gpus >= shape.gpus) {
      disagg.fail("prefill_ep_size",
                  fmt::format("the prefill pool's {} groups x {} GPUs = {} must leave GPUs of the cluster's {} for "
                              "decoding",
                              d.prefill_groups, k, prefill_gpus, shape.gpus));
    }
    const std::int64_t decode_gpus = shape.gpus - prefill_gpus;
    if (decode_gpus % ep != 0) {
      disagg.fail("prefill_ep_size",
                  fmt::format("the decode pool's {} GPUs (the cluster's {} less {} groups x {} for prefill) must "
                              "divide into groups of parallel.ep_size = {}",
                              decode_gpus, shape.gpus, d.prefill_groups, k, ep));
    }
    if ((shape.routed_experts + out.parallel.redundant_experts) % k != 0) {
      disagg.fail("prefill_ep_size",
                  fmt::format("routed experts + redundant slots ({} + {}) must divide evenly over the prefill "
                              "group's {} GPUs",
                              shape.routed_experts, out.parallel.redundant_experts, k));
    }
    const int tp = out.parallel.attention_tp;
    if (k % tp != 0 || std::min(k, shape.gpus_per_node) % tp != 0) {
      disagg.fail("prefill_ep_size", fmt::format("must be a multiple of parallel.attention_tp = {}, got {}", tp, k));
    }
  }
  d.handoff = disagg.string("handoff", k_default_handoff,
                            "how each prefilled request's decode group and DP rank are chosen (a handoff policy: "
                            "least_loaded, round_robin, kv_aware; `epsim list policies`)");
  if (const std::string unknown = handoff_registry().unknown_message(d.handoff); !unknown.empty()) {
    disagg.fail("handoff", unknown);
  }
  if (!prefill_gpu.empty()) {
    core::ParamTable t({core::preset_layer(disagg, "prefill_gpu", hardware::gpu_presets(), prefill_gpu)},
                       "prefill_gpu");
    d.prefill_gpu = hardware::parse_gpu_spec(t);
  }
  disagg.finish();
}

}  // namespace

ServingSections parse_serving_sections(core::ParamTable& root, const ServingShape& shape) {
  ServingSections out;
  out.pool_list = root.contains("pool");
  parse_parallel(root, shape, out);
  auto scheduler = root.table("scheduler", "continuous batching");
  out.serving.scheduler = parse_scheduler(scheduler);
  out.serving.step_overhead_us =
      scheduler.real("step_overhead_us", 0.0, "fixed CPU/scheduling time per step, us", core::k_non_negative);
  scheduler.finish();
  parse_disaggregation(root, shape, out);
  auto metrics = root.table("metrics", "what is measured");
  out.serving.window.warmup_s = metrics.real(
      "warmup_s", 0.0, "requests arriving (and steps starting) before this are not measured", core::k_time_s);
  out.serving.window.cooldown_s =
      metrics.real("cooldown_s", 0.0, "nor those in this many seconds before the last arrival", core::k_time_s);
  metrics.finish();
  auto slo = root.table("slo", "latency targets");
  out.serving.slo = parse_slo(slo);
  out.serving.prefix_cache = parse_prefix_cache(root);
  if (!root.documenting() && out.serving.prefix_cache.enabled && out.serving.scheduler.static_batching) {
    scheduler.fail("batching", "prefix caching needs continuous batching");
  }
  if (!root.documenting() && out.serving.load_balancer == LoadBalancer::cache_aware &&
      !out.serving.prefix_cache.enabled) {
    root.table("parallel", "parallelism")
        .fail("load_balancer", "cache_aware routes by the ranks' prefix caches: set prefix_cache.enabled = true");
  }
  out.serving.speculative = parse_speculative(root);
  return out;
}

}  // namespace epsim::serving
