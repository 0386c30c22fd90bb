// SPDX-License-Identifier: Apache-2.0
#include "experiments/assembly/experiment_config.hpp"

#include <fmt/format.h>

#include <toml++/toml.h>
#include <fstream>
#include <sstream>

#include "core/csv_lines.hpp"
#include "core/embedded_file.hpp"
#include "core/error.hpp"
#include "core/message_text.hpp"
#include "core/random_streams.hpp"
#include "core/toml_guard.hpp"
#include "experiments/assembly/config_sections.hpp"
#include "sim/memory_plan.hpp"
#include "sim/pool_config.hpp"

namespace epsim::experiments {

std::span<const core::EmbeddedFile> embedded_examples();

std::string_view embedded_demo_config() {
  for (const core::EmbeddedFile& f : embedded_examples()) {
    if (f.name == "demo") {
      return f.content;
    }
  }
  throw core::Error("the demo config is not embedded in this build");
}

toml::table parse_config_text(std::string_view text, const std::string& source) {
  core::check_toml_key_depth(text, source);
  try {
    return toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    throw core::ConfigError(source, "",
                            fmt::format("line {}, column {}: invalid TOML: {}", e.source().begin.line,
                                        e.source().begin.column, e.description()));
  }
}

namespace {

// "--set a.b=value": the value is parsed as TOML; if that fails it is taken as a bare string.
toml::table parse_sets(const std::vector<std::string>& sets) {
  toml::table out;
  for (const std::string& s : sets) {
    const auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw core::ConfigError("--set", s, "expected key=value, e.g. --set workload.rate_rps=12");
    }
    const std::string key = s.substr(0, eq);
    const std::string value = s.substr(eq + 1);
    // One key, one value: a newline would let the value open other tables ("1\n[cluster]\nnodes = 9").
    if (core::has_control_characters(s)) {
      throw core::ConfigError("--set", core::terminal_safe(core::excerpt(key)),
                              fmt::format("\"{}\": a --set is one line, key=value, without control characters",
                                          core::terminal_safe(core::excerpt(s))));
    }
    core::check_toml_key_depth(key, "--set");
    std::string quoted = "\"";
    for (const char c : value) {
      if (c == '"' || c == '\\') {
        quoted += '\\';
      }
      quoted += c;
    }
    quoted += '"';
    toml::table one;
    try {
      one = toml::parse(fmt::format("{} = {}", key, value), std::string_view("--set"));
    } catch (const toml::parse_error&) {
      try {
        one = toml::parse(fmt::format("{} = {}", key, quoted), std::string_view("--set"));
      } catch (const toml::parse_error&) {
        throw core::ConfigError("--set", key, "cannot parse \"" + s + "\" as key=value");
      }
    }
    if (one.size() != 1) {
      throw core::ConfigError("--set", key, "\"" + s + "\" sets more than one key: give one key=value per --set");
    }
    policies::expand_rebalance_shorthand(one);
    core::merge_tables(out, one);
  }
  return out;
}

// What spans sections: each pool's expert weights and KV cache must fit its GPUs together.
void check_memory(const ExperimentConfig& cfg, core::ParamTable& root, bool pool_list) {
  for (std::size_t i = 0; i < cfg.pools.size(); ++i) {
    const serving::PoolSpec& pool = cfg.pools[i];
    const hardware::GpuSpec& gpu = cfg.gpu_of(pool);
    const int slots = pool.slots_per_gpu(cfg.model.routed_experts);
    const serving::MemoryPlan mem =
        serving::plan_memory(cfg.model, gpu, slots, cfg.serving.scheduler, pool.attention_tp);
    if (mem.kv_blocks >= 1) {
      continue;
    }
    const std::string what =
        fmt::format("{:.1f} GiB of weights per GPU ({} expert slots) + {:.1f} GiB reserve exceed {:.1f} GiB x {} of {}",
                    mem.weights_gib, slots, cfg.serving.scheduler.activation_reserve_gib, gpu.memory_gib,
                    cfg.serving.scheduler.gpu_memory_utilization, gpu.name);
    if (pool_list) {
      root.fail("pool",
                fmt::format("no room for pool \"{}\"'s KV cache at EP{}: {}", pool.name, pool.shape.ep_size, what));
    }
    if (pool.role == serving::PoolRole::prefill) {
      // A smaller prefill group holds more expert slots per GPU: its cache must fit too.
      auto disagg = root.table("disaggregation", "separate prefill and decode pools");
      disagg.fail("prefill_ep_size",
                  fmt::format("no room for the prefill pool's KV cache at EP{}: {}", pool.shape.ep_size, what));
    }
    auto scheduler = root.table("scheduler", "continuous batching");
    scheduler.fail("gpu_memory_utilization", "no room for the KV cache: " + what);
  }
}

// Valid settings that do nothing as combined: said out loud instead of silently ignored.
std::vector<std::string> policy_warnings(const ExperimentConfig& cfg) {
  std::vector<std::string> out;
  const bool replicating =
      cfg.policy.placement == "eplb" || cfg.policy.placement == "grace" || cfg.policy.placement == "replicated";
  if ((cfg.policy.routing == "metro" || cfg.policy.routing == "grace") &&
      (cfg.primary_pool().redundant_experts == 0 || !replicating)) {
    out.push_back(fmt::format(
        "{}: policy.routing = \"{}\" chooses among replicas, but placement \"{}\" with {} redundant slots gives every "
        "expert one copy: it routes exactly like \"even\" (use a replicating placement, eplb or grace, and "
        "parallel.redundant_experts > 0, or the study bundle \"{}\")",
        cfg.source, cfg.policy.routing, cfg.policy.placement, cfg.primary_pool().redundant_experts,
        cfg.policy.routing));
  }
  if (cfg.policy.needs.predictions && cfg.routing.source == workloads::RoutingSourceKind::trace) {
    out.push_back(fmt::format(
        "{}: policy.rebalance = \"{}\" re-optimises from the predicted routing of the queued requests, but a "
        "replayed trace predicts nothing: it never re-optimises (set policy.rebalance = {{ trigger = \"{}\", mode = "
        "\"reactive\" }}, or use synthetic routing)",
        cfg.source, cfg.policy.rebalance.trigger_name, cfg.policy.rebalance.trigger_name));
  }
  // Slots that only round the experts up to a whole number per GPU (384 on 72) are needed, not redundant.
  const std::int64_t ep = cfg.ep_size();
  const std::int64_t padding = ep > 0 ? (ep - cfg.model.routed_experts % ep) % ep : 0;
  // A trigger that replicates (periodic EPLB) fills them later.
  const bool filled_later = cfg.policy.rebalance.trigger && cfg.policy.rebalance.trigger->fills_redundant_slots();
  if (cfg.primary_pool().redundant_experts > padding && !replicating && !filled_later) {
    out.push_back(fmt::format(
        "{}: parallel.redundant_experts = {} but placement \"{}\" places one copy per expert: the redundant slots "
        "stay empty",
        cfg.source, cfg.primary_pool().redundant_experts, cfg.policy.placement));
  }
  return out;
}

ExperimentConfig parse_all(const toml::table& file, const std::string& source, const toml::table& sets,
                           const std::string& sets_source = "--set") {
  ExperimentConfig cfg;
  cfg.source = source;
  core::ParamTable root({core::ParamLayer{&sets, sets_source}, core::ParamLayer{&file, source}}, "");

  const RunSettings run = parse_run_section(root);
  cfg.seed = run.seed;
  cfg.workload_seed = run.workload_seed;
  cfg.cluster_seed = run.cluster_seed;
  const double max_sim_time_s = run.max_sim_time_s;

  cfg.model = models::parse_model_section(root);
  hardware::HardwareConfig hw = hardware::parse_hardware_sections(root);
  cfg.gpu = std::move(hw.gpu);
  cfg.cluster = std::move(hw.cluster);
  cfg.variability = std::move(hw.variability);
  cfg.collectives = hw.collectives;
  cfg.comm = hw.comm;

  serving::ServingSections serving = serving::parse_serving_sections(
      root, {cfg.cluster.num_gpus(), cfg.cluster.gpus_per_node, cfg.model.routed_experts});
  cfg.serving = serving.serving;
  cfg.serving.max_sim_time_s = max_sim_time_s;

  auto workload = root.table("workload", "request arrivals and lengths");
  cfg.workload = workloads::parse_workload(workload);
  cfg.routing =
      workloads::parse_routing_section(root, {cfg.model.num_moe_layers(), cfg.model.routed_experts, cfg.model.top_k,
                                              cfg.model.expert_groups, cfg.model.topk_group});
  auto policy = root.table("policy", "placement, routing and rebalancing policies (epsim list policies)");
  cfg.policy = policies::parse_policy_section(policy);
  const std::optional<hardware::EpCommConfig> prefill_comm = hw.prefill_comm;
  cfg.pools = serving::parse_pools(root, serving,
                                   {cfg.cluster.num_gpus(), cfg.cluster.gpus_per_node, cfg.model.routed_experts,
                                    &cfg.comm, &prefill_comm, &cfg.policy});
  cfg.outputs = parse_outputs(root);
  cfg.measured = parse_measured_cost_section(root);
  cfg.explicit_pools = serving.pool_list;
  check_memory(cfg, root, serving.pool_list);
  for (const serving::PoolSpec& pool : cfg.pools) {
    if (const policies::PolicyConfig& pc = pool.policy; pc.max_ep_size > 0 && pool.shape.ep_size > pc.max_ep_size) {
      // Refused before any profiling or placing: past the bound a placement takes minutes to hours.
      const std::string bounded = pc.max_ep_size_key == "policy.rebalance" ? pc.rebalance.trigger_name : pc.placement;
      throw core::ConfigError(
          source, serving.pool_list ? "pool" : pc.max_ep_size_key,
          fmt::format("\"{}\" handles EP groups of at most {} GPUs (larger ones take minutes or more: "
                      "docs/policies.md, Bounds), got {}{}; use a smaller ep_size or another policy",
                      bounded, pc.max_ep_size, pool.shape.ep_size,
                      serving.pool_list ? fmt::format(" in pool \"{}\"", pool.name) : std::string()));
    }
    if (pool.policy.placement == "linear" && cfg.model.routed_experts < pool.shape.ep_size) {
      // What run would reject (linear gives each expert one GPU): said now, with the way out.
      throw core::ConfigError(
          source, serving.pool_list ? "pool" : "policy.placement",
          fmt::format("linear places one copy of each expert: {} experts cannot cover an EP group of {} GPUs (use "
                      "\"replicated\", or \"eplb\" with parallel.redundant_experts, or a smaller parallel.ep_size)",
                      cfg.model.routed_experts, pool.shape.ep_size));
    }
  }
  root.finish();
  cfg.warnings = policy_warnings(cfg);
  const serving::DisaggregationConfig& d = serving.disaggregation;
  if (!serving.pool_list && d.prefill_groups == 0 && d.prefill_ep_size != cfg.ep_size()) {
    cfg.warnings.push_back(
        fmt::format("{}: disaggregation.prefill_ep_size = {} sizes the prefill pool, but prefill_groups = 0 "
                    "(co-located): it has no effect",
                    cfg.source, d.prefill_ep_size));
  }
  build_measured_cost(cfg);

  toml::table effective = file;
  core::merge_tables(effective, sets);
  std::ostringstream json;
  json << toml::json_formatter{effective};
  cfg.echo_json = json.str();
  return cfg;
}

}  // namespace

RunSettings parse_run_section(core::ParamTable& root) {
  auto run = root.table("run", "run settings");
  RunSettings s;
  s.seed = static_cast<std::uint64_t>(run.integer(
      "seed", 42, "the run seed: policies' own randomness, and every seed family below left unset (--seed overrides)",
      {0, INT64_MAX}));
  const auto family_seed = [&](std::string_view key, std::string_view doc) -> std::optional<std::uint64_t> {
    if (const auto v = run.optional_integer(key, "the run seed", doc, {0, INT64_MAX})) {
      return static_cast<std::uint64_t>(*v);
    }
    return std::nullopt;
  };
  s.workload_seed =
      family_seed("workload_seed",
                  "seed of the workload's streams: arrivals, lengths, routing (synthetic, or a trace's resampling)");
  s.cluster_seed = family_seed(
      "cluster_seed", "seed of the cluster's streams: static GPU speed draws, drift, jitter, cost-profiling noise");
  s.max_sim_time_s = run.real("max_sim_time_s", 3600.0,
                              "stop simulated time here; unfinished requests are reported and count as SLO misses",
                              core::k_positive_time_s);
  run.finish();
  return s;
}

OutputsConfig parse_outputs(core::ParamTable& root) {
  auto outputs = root.table("output", "optional outputs of run");
  OutputsConfig o;
  o.steps_csv = outputs.boolean("steps_csv", false, "write steps.csv (one row per step)");
  o.tokens_csv = outputs.boolean("tokens_csv", false, "write tokens.csv (every token of every request)");
  o.layers_csv = outputs.boolean("layers_csv", false, "write layers.csv (per GPU, sampled steps)");
  o.layers_every = outputs.integer("layers_every", 100, "layers.csv: every n-th step of each group", {1, 1LL << 40});
  o.timeline = outputs.boolean("timeline", false, "write timeline.json (Chrome trace, open in Perfetto)");
  o.timeline_steps =
      outputs.integer("timeline_steps", 20, "timeline: the first n steps of each group (0 = all)", {0, 1LL << 40});
  o.timeline_max_mib = outputs.real("timeline_max_mib", 64.0,
                                    "timeline: size cap in MiB; past it every 2^k-th step of each group is kept",
                                    {1.0 / 1024.0, 65536.0});
  o.events_csv = outputs.boolean("events_csv", false, "write events.csv (migrations, rebalances, preemptions)");
  o.gpu_layers_csv =
      outputs.boolean("gpu_layers_csv", false, "write gpu_layers.csv (per GPU x MoE layer straggler matrix)");
  outputs.finish();
  return o;
}

std::vector<double> resolved_speed_factors(const ExperimentConfig& cfg) {
  return hardware::sample_speed_factors(cfg.variability, cfg.cluster.num_gpus(),
                                        core::RandomStreams(cfg.seed_of(SeedFamily::cluster)));
}

ExperimentConfig load_config_text(std::string_view text, const std::string& source,
                                  const std::vector<std::string>& sets) {
  toml::table file = parse_config_text(text, source);
  policies::expand_rebalance_shorthand(file);
  const toml::table overrides = parse_sets(sets);
  return parse_all(file, source, overrides);
}

ExperimentConfig load_config_tables(toml::table file, const std::string& source, const toml::table& overrides,
                                    const std::string& overrides_source) {
  policies::expand_rebalance_shorthand(file);
  return parse_all(file, source, overrides, overrides_source);
}

ExperimentConfig load_config(const std::string& path, const std::vector<std::string>& sets) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw core::ConfigError(path, "", "cannot open the config file");
  }
  return load_config_text(core::read_whole_input(in, path), path, sets);
}

}  // namespace epsim::experiments
