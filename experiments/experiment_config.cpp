#include "experiments/experiment_config.hpp"

#include <fmt/format.h>

#include <toml++/toml.h>
#include <array>
#include <fstream>
#include <sstream>

#include "policies/placement_policy.hpp"
#include "policies/registry.hpp"
#include "policies/routing_policy.hpp"
#include "policies/routing_predictor.hpp"
#include "sim/core/embedded_file.hpp"
#include "sim/core/error.hpp"
#include "sim/core/random_streams.hpp"
#include "sim/serving/memory_plan.hpp"
#include "workloads/trace_io.hpp"

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

namespace {

toml::table parse_toml(std::string_view text, const std::string& source) {
  try {
    return toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    throw core::ConfigError(source, "",
                            fmt::format("line {}, column {}: invalid TOML: {}", e.source().begin.line,
                                        e.source().begin.column, e.description()));
  }
}

// Merges `src` into `dst`, tables recursively, other values replaced.
void merge_into(toml::table& dst, const toml::table& src) {
  for (const auto& [k, v] : src) {
    if (v.is_table() && dst.contains(k) && dst.get(k)->is_table()) {
      merge_into(*dst.get(k)->as_table(), *v.as_table());
    } else {
      dst.insert_or_assign(k, v);
    }
  }
}

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
    merge_into(out, one);
  }
  return out;
}

constexpr std::array<std::string_view, 2> k_sources{"synthetic", "trace"};

ExperimentConfig parse_all(const toml::table& file, const std::string& source, const toml::table& sets) {
  ExperimentConfig cfg;
  cfg.source = source;
  core::ParamTable root({core::ParamLayer{&sets, "--set"}, core::ParamLayer{&file, source}}, "");

  auto run = root.table("run", "run settings");
  cfg.seed = static_cast<std::uint64_t>(run.integer("seed", 42, "seed of every random stream", {0, INT64_MAX}));
  cfg.serving.max_sim_time_s = run.real(
      "max_sim_time_s", 3600.0, "stop simulated time here (unfinished requests are reported)", core::k_positive);
  run.finish();

  auto model = root.table("model", "model architecture: a preset and field overrides");
  const std::string model_preset = model.string("preset", "", "model preset name (epsim list models)");
  if (!model_preset.empty()) {
    model.add_layer(core::preset_layer(model, "preset", models::model_presets(), model_preset));
  }
  cfg.model = models::parse_model_spec(model);

  // The cluster first: its preset names the default GPU.
  auto cluster = root.table("cluster", "cluster shape, links, variability (a preset and field overrides)");
  const std::string cluster_preset = cluster.string("preset", "", "cluster preset name (epsim list clusters)");
  if (!cluster_preset.empty()) {
    cluster.add_layer(core::preset_layer(cluster, "preset", hardware::cluster_presets(), cluster_preset));
  }
  cfg.cluster = hardware::parse_cluster_spec(cluster);

  auto gpu = root.table("gpu", "GPU type: a preset and field overrides");
  const std::string gpu_preset = gpu.string("preset", cfg.cluster.gpu, "GPU preset name (default: the cluster's)");
  if (!gpu_preset.empty()) {
    gpu.add_layer(core::preset_layer(gpu, "preset", hardware::gpu_presets(), gpu_preset));
  }
  cfg.gpu = hardware::parse_gpu_spec(gpu);
  gpu.finish();

  const int gpus = cfg.cluster.num_gpus();
  const std::vector<double> factors = cluster.real_list(
      "speed_factors", "shorthand for variability.kind = \"explicit\": one factor per GPU (0.88 = 12 % slow)",
      {0.0, 10.0, true});
  auto variability = cluster.table("variability", "GPU-to-GPU speed variability");
  cfg.variability = hardware::parse_variability(variability, gpus, cfg.gpu.tdp_w);
  variability.finish();
  if (!factors.empty()) {
    if (cfg.variability.kind != hardware::VariabilityConfig::Kind::none) {
      cluster.fail("speed_factors", "give either speed_factors or [cluster.variability], not both");
    }
    if (static_cast<int>(factors.size()) != gpus) {
      cluster.fail("speed_factors", fmt::format("expected one factor per GPU ({} = {} nodes x {}), got {}", gpus,
                                                cfg.cluster.nodes, cfg.cluster.gpus_per_node, factors.size()));
    }
    cfg.variability.kind = hardware::VariabilityConfig::Kind::explicit_list;
    cfg.variability.factors = factors;
  }
  static constexpr std::array<std::string_view, 3> k_collective_models{"auto", "graph", "ports"};
  cfg.collective_model =
      cluster.choice("collective_model", "auto", "all-to-all costing: graph (exact paths), ports (per-GPU ports), auto",
                     k_collective_models);
  cfg.graph_max_gpus = static_cast<int>(
      cluster.integer("graph_max_gpus", 16, "auto: largest EP group costed on the graph", {1, 1 << 20}));
  cluster.finish();

  auto parallel = root.table("parallel", "parallelism");
  cfg.ep_size =
      static_cast<int>(parallel.integer("ep_size", 0, "GPUs per expert-parallel group (0 = all GPUs)", {0, 1 << 20}));
  if (cfg.ep_size == 0) {
    cfg.ep_size = gpus;
  }
  if (gpus % cfg.ep_size != 0) {
    parallel.fail("ep_size", fmt::format("must divide the cluster's {} GPUs, got {}", gpus, cfg.ep_size));
  }
  if (cfg.ep_size > cfg.cluster.gpus_per_node && cfg.ep_size % cfg.cluster.gpus_per_node != 0) {
    parallel.fail("ep_size", fmt::format("an EP group larger than a node must span whole nodes ({} GPUs each), got {}",
                                         cfg.cluster.gpus_per_node, cfg.ep_size));
  }
  if (cfg.ep_size < cfg.cluster.gpus_per_node && cfg.cluster.gpus_per_node % cfg.ep_size != 0) {
    parallel.fail("ep_size", fmt::format("an EP group inside a node must divide its {} GPUs, got {}",
                                         cfg.cluster.gpus_per_node, cfg.ep_size));
  }
  cfg.redundant_experts = static_cast<int>(
      parallel.integer("redundant_experts", 0, "extra expert slots per EP group (EPLB redundancy)", {0, 1 << 16}));
  if ((cfg.model.routed_experts + cfg.redundant_experts) % cfg.ep_size != 0) {
    parallel.fail("redundant_experts",
                  fmt::format("routed experts + redundant slots ({} + {}) must divide evenly over ep_size = {} GPUs",
                              cfg.model.routed_experts, cfg.redundant_experts, cfg.ep_size));
  }
  cfg.serving.ep_size = cfg.ep_size;
  cfg.serving.attention_tp = static_cast<int>(parallel.integer(
      "attention_tp", 1, "GPUs per attention rank: 1 = DP attention, > 1 = tensor-parallel attention", {1, 1024}));
  if (cfg.ep_size % cfg.serving.attention_tp != 0 ||
      std::min(cfg.ep_size, cfg.cluster.gpus_per_node) % cfg.serving.attention_tp != 0) {
    parallel.fail("attention_tp", fmt::format("must divide ep_size ({}) and stay inside a node ({} GPUs), got {}",
                                              cfg.ep_size, cfg.cluster.gpus_per_node, cfg.serving.attention_tp));
  }
  static constexpr std::array<std::string_view, 2> k_balancers{"round_robin", "least_outstanding"};
  cfg.serving.load_balancer = parallel.choice("load_balancer", "round_robin", "how requests are spread over EP groups",
                                              k_balancers) == "least_outstanding"
                                  ? serving::LoadBalancer::least_outstanding
                                  : serving::LoadBalancer::round_robin;
  parallel.finish();

  auto workload = root.table("workload", "request arrivals and lengths");
  cfg.workload = workloads::parse_workload(workload);

  auto routing = root.table("routing", "where expert loads come from");
  cfg.routing_source =
      routing.choice("source", "synthetic", "routing source: synthetic generator or a trace", k_sources);
  cfg.router = workloads::parse_synthetic_router(routing);
  cfg.trace.file = routing.string("trace_file", "", "trace: the routing trace to replay (epsim trace gen / convert)");
  cfg.trace.loop = routing.boolean("trace_loop", true, "trace: start again at the end (false: the run stops there)");
  if (cfg.routing_source == "trace") {
    if (cfg.trace.file.empty()) {
      routing.fail("trace_file", "source = \"trace\" needs a trace_file");
    }
    // Check the trace's shape now, so a mismatch is a config error before anything runs.
    try {
      const workloads::TraceReader reader(cfg.trace.file);
      const auto& h = reader.header();
      if (h.moe_layers() != cfg.model.num_moe_layers() || h.experts() != cfg.model.routed_experts ||
          h.top_k() != cfg.model.top_k) {
        routing.fail("trace_file",
                     fmt::format("the trace has {} MoE layers x {} experts, top-{}; the model has {} x {}, top-{}",
                                 h.moe_layers(), h.experts(), h.top_k(), cfg.model.num_moe_layers(),
                                 cfg.model.routed_experts, cfg.model.top_k));
      }
    } catch (const core::ConfigError&) {
      throw;
    } catch (const core::Error& e) {
      routing.fail("trace_file", e.what());
    }
  }
  routing.finish();

  auto policy = root.table("policy", "placement and routing policies (epsim list policies)");
  cfg.policy.placement = policy.string("placement", "linear", "placement policy");
  cfg.policy.routing = policy.string("routing", "even", "token routing policy among replicas");
  // Each policy is built once here so that its name and options are checked before anything runs.
  const auto check_policy = [&](const auto& registry, const std::string& key, const std::string& name,
                                std::shared_ptr<const toml::table>& options_out) {
    if (const std::string unknown = registry.unknown_message(name); !unknown.empty()) {
      policy.fail(key, unknown);
    }
    auto options = policy.table(key + "_options", "options of the " + key + " policy");
    registry.create(name, options);
    auto merged = std::make_shared<toml::table>();
    for (const toml::table* t : {file.get_as<toml::table>("policy"), sets.get_as<toml::table>("policy")}) {
      if (t != nullptr) {
        if (const toml::table* o = t->get_as<toml::table>(key + "_options")) {
          merge_into(*merged, *o);
        }
      }
    }
    options_out = std::move(merged);
  };
  check_policy(policies::placement_registry(), "placement", cfg.policy.placement, cfg.policy.placement_options);
  check_policy(policies::routing_registry(), "routing", cfg.policy.routing, cfg.policy.routing_options);
  cfg.policy.load_window_steps =
      policy.integer("load_window_steps", 32,
                     "steps of routing (the trace's first, or synthetic) a load-aware placement sees", {1, 1 << 24});
  cfg.policy.load_window_tokens =
      policy.integer("load_window_tokens", 512, "synthetic load window: tokens per step", {1, 1 << 24});
  static constexpr std::array<std::string_view, 2> k_windows{"warmup", "synthetic"};
  cfg.policy.load_window = policy.choice(
      "load_window", "warmup",
      "synthetic routing: warmup = record real steps served with the linear placement (GEM's step 1); synthetic = "
      "steps of load_window_tokens tokens from a router of its own",
      k_windows);
  cfg.policy.load_window_skip_steps =
      policy.integer("load_window_skip_steps", 100, "warmup: ramp-up steps not recorded", {0, 1 << 24});
  static constexpr std::array<std::string_view, 4> k_rebalance{"none", "periodic", "drift", "director"};
  static constexpr std::array<std::string_view, 4> k_modes{"auto", "stop_the_world", "overlapped", "compute_phases"};
  cfg.policy.rebalance =
      policy.choice("rebalance", "none",
                    "re-placement during serving: periodic = vLLM-style EPLB, drift = ViBE's drift-triggered "
                    "incremental recalibration, director = DIRECTOR's online re-optimisation before each batch",
                    k_rebalance);
  cfg.policy.rebalance_window_steps =
      policy.integer("rebalance_window_steps", 64, "periodic: steps of expert loads the EPLB solve sees", {1, 1 << 20});
  cfg.policy.rebalance_interval_steps =
      policy.integer("rebalance_interval_steps", 256, "periodic: steps between EPLB solves", {1, 1LL << 40});
  cfg.policy.rebalance_mode = policy.choice(
      "rebalance_mode", "auto",
      "how expert weights move: serving stops (stop_the_world), goes on with the old placement (overlapped), or "
      "they move only in the compute phases of steps (compute_phases, DIRECTOR's); auto = compute_phases for "
      "director, else stop_the_world",
      k_modes);
  if (cfg.policy.rebalance_mode == "auto") {
    cfg.policy.rebalance_mode = cfg.policy.rebalance == "director" ? "compute_phases" : "stop_the_world";
  }
  cfg.policy.migration_max_gb_per_step = policy.real(
      "migration_max_gb_per_step", 0.0, "compute_phases: GB one step may move (0 = no bound)", core::k_non_negative);
  {
    static constexpr std::array<std::string_view, 2> k_dir_modes{"proactive", "reactive"};
    static constexpr std::array<std::string_view, 3> k_predictors{"oracle", "cascade", "quantized"};
    policies::DirectorTriggerOptions& d = cfg.policy.director;
    d.mode = policy.choice("director_mode", "proactive",
                           "director: proactive = W predicted for the queued requests (DIRECTOR); reactive = W of "
                           "the previous batch (the paper's online baseline)",
                           k_dir_modes) == "reactive"
                 ? policies::DirectorTriggerOptions::Mode::reactive
                 : policies::DirectorTriggerOptions::Mode::proactive;
    static constexpr std::array<std::string_view, 2> k_when{"interval", "arrivals"};
    d.when = policy.choice("director_when", "interval",
                           "director: re-optimise every director_interval_steps steps (interval) or once new "
                           "requests are queued (arrivals: before each batch of queued work)",
                           k_when) == "arrivals"
                 ? policies::DirectorTriggerOptions::When::arrivals
                 : policies::DirectorTriggerOptions::When::interval;
    d.interval_steps =
        policy.integer("director_interval_steps", 50,
                       "director: steps between re-optimisations (a batch of queued work)", {1, 1 << 24});
    static constexpr std::array<std::string_view, 2> k_scope{"outstanding", "queued"};
    d.queued_only = policy.choice("director_predict", "outstanding",
                                  "director: whose work the predictor forecasts: every outstanding request "
                                  "(queued and running) or the queued ones the next admissions take (the next "
                                  "batch under static batching)",
                                  k_scope) == "queued";
    d.min_gain = policy.real("director_min_gain", 0.02,
                             "director: a layer migrates only when the new placement saves at least this share of "
                             "its modelled latency (Eq. 1-4 under the new W)",
                             {0.0, 0.99});
    d.horizon_steps = policy.integer("director_horizon_steps", 50,
                                     "director: steps of the queued requests' work W predicts", {1, 1 << 24});
    const std::string predictor =
        policy.choice("director_predictor", "quantized",
                      "director: routing predictor, oracle (p = 1) or the paper's cascade / quantized (Table II: "
                      "p of this model if listed, else the median of its four)",
                      k_predictors);
    const double accuracy =
        policy.real("director_accuracy", -1.0,
                    "director: top-k accuracy p overriding the predictor's (-1 = the predictor's)", {-1.0, 1.0});
    d.accuracy = accuracy >= 0.0 ? accuracy : policies::predictor_accuracy(predictor, cfg.model.name);
  }
  cfg.policy.drift.check_every_steps =
      policy.integer("drift_check_every_steps", 10,
                     "drift: H, forward passes between load-drift checks (and of cooldown)", {1, 1 << 20});
  cfg.policy.drift.window_steps =
      policy.integer("drift_window_steps", 100, "drift: forward passes averaged into the current load", {1, 1 << 16});
  cfg.policy.drift.threshold =
      policy.real("drift_threshold", 0.05, "drift: cosine distance of any layer's load that triggers", {0.0, 1.0});
  cfg.policy.drift.tolerance = policy.real(
      "drift_tolerance", 0.03, "drift: incremental solver stops within (1 + this) of the mean GPU time", {0.0, 10.0});
  {
    auto prof = policy.table("cost_profile", "the per-GPU cost curves C_g(n) that load-aware policies see");
    static constexpr std::array<std::string_view, 2> k_profile{"profiled", "exact"};
    serving::CostProfileConfig& cp = cfg.policy.cost_profile;
    cp.mode = prof.choice("mode", "profiled",
                          "profiled = sampled at tile boundaries with noise at time 0, interpolated (GEM's method); "
                          "exact = the simulator's own cost model",
                          k_profile);
    cp.noise_cv = prof.real("noise_cv", 0.01, "relative std of each profile sample's error", {0.0, 1.0});
    cp.dense_until_tokens = prof.integer("dense_until_tokens", 8192,
                                         "sample every tile boundary up to this many tokens per GPU", {1, 1LL << 30});
    cp.sparse_interval_tokens =
        prof.integer("sparse_interval_tokens", 2048, "then sample every this many tokens", {1, 1LL << 30});
    cp.max_tokens = prof.integer("max_tokens", 65536, "last sampled token count (beyond: linear)", {1, 1LL << 40});
    prof.finish();
  }
  policy.finish();

  auto scheduler = root.table("scheduler", "continuous batching");
  cfg.serving.scheduler = serving::parse_scheduler(scheduler);
  cfg.serving.step_overhead_us =
      scheduler.real("step_overhead_us", 0.0, "fixed CPU/scheduling time per step, us", core::k_non_negative);
  scheduler.finish();

  {
    const serving::MemoryPlan mem =
        serving::plan_memory(cfg.model, cfg.gpu, cfg.slots_per_gpu(), cfg.serving.scheduler, cfg.serving.attention_tp);
    if (mem.kv_blocks < 1) {
      scheduler.fail(
          "gpu_memory_utilization",
          fmt::format("no room for the KV cache: {:.1f} GiB of weights per GPU ({} expert slots) + {:.1f} GiB "
                      "reserve exceed {:.1f} GiB x {} of {}",
                      mem.weights_gib, cfg.slots_per_gpu(), cfg.serving.scheduler.activation_reserve_gib,
                      cfg.gpu.memory_gib, cfg.serving.scheduler.gpu_memory_utilization, cfg.gpu.name));
    }
  }

  auto disagg = root.table("disaggregation", "separate prefill and decode pools");
  cfg.disaggregation.prefill_groups = static_cast<int>(disagg.integer(
      "prefill_groups", 0, "EP groups in the prefill pool (the first ones); 0 = prefill and decode co-located",
      {0, 1 << 20}));
  const std::string prefill_gpu =
      disagg.string("prefill_gpu", "", "GPU preset of the prefill pool (default: the cluster's)");
  if (cfg.disaggregation.prefill_groups > 0 && cfg.disaggregation.prefill_groups >= gpus / cfg.ep_size) {
    disagg.fail("prefill_groups", fmt::format("must leave at least one of the {} EP groups for decoding, got {}",
                                              gpus / cfg.ep_size, cfg.disaggregation.prefill_groups));
  }
  if (!prefill_gpu.empty()) {
    core::ParamTable t({core::preset_layer(disagg, "prefill_gpu", hardware::gpu_presets(), prefill_gpu)},
                       "prefill_gpu");
    cfg.disaggregation.prefill_gpu = hardware::parse_gpu_spec(t);
  }
  disagg.finish();

  auto metrics = root.table("metrics", "what is measured");
  cfg.serving.window.warmup_s = metrics.real(
      "warmup_s", 0.0, "requests arriving (and steps starting) before this are not measured", core::k_non_negative);
  cfg.serving.window.cooldown_s =
      metrics.real("cooldown_s", 0.0, "nor those in this many seconds before the last arrival", core::k_non_negative);
  metrics.finish();

  auto outputs = root.table("output", "optional outputs of run");
  cfg.outputs.steps_csv = outputs.boolean("steps_csv", false, "write steps.csv (one row per step)");
  cfg.outputs.tokens_csv = outputs.boolean("tokens_csv", false, "write tokens.csv (every token of every request)");
  cfg.outputs.layers_csv = outputs.boolean("layers_csv", false, "write layers.csv (per GPU, sampled steps)");
  cfg.outputs.layers_every =
      outputs.integer("layers_every", 100, "layers.csv: every n-th step of each group", {1, 1LL << 40});
  cfg.outputs.timeline = outputs.boolean("timeline", false, "write timeline.json (Chrome trace, open in Perfetto)");
  cfg.outputs.timeline_steps =
      outputs.integer("timeline_steps", 20, "timeline: the first n steps of each group", {1, 1LL << 40});
  outputs.finish();

  auto slo = root.table("slo", "latency targets");
  cfg.serving.slo = serving::parse_slo(slo);

  root.finish();

  toml::table effective = file;
  merge_into(effective, sets);
  std::ostringstream json;
  json << toml::json_formatter{effective};
  cfg.echo_json = json.str();
  return cfg;
}

}  // namespace

std::vector<double> resolved_speed_factors(const ExperimentConfig& cfg) {
  return hardware::sample_speed_factors(cfg.variability, cfg.cluster.num_gpus(), core::RandomStreams(cfg.seed));
}

ExperimentConfig load_config_text(std::string_view text, const std::string& source,
                                  const std::vector<std::string>& sets) {
  const toml::table file = parse_toml(text, source);
  const toml::table overrides = parse_sets(sets);
  return parse_all(file, source, overrides);
}

ExperimentConfig load_config(const std::string& path, const std::vector<std::string>& sets) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw core::ConfigError(path, "", "cannot open the config file");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return load_config_text(text.str(), path, sets);
}

}  // namespace epsim::experiments
