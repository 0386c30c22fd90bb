#pragma once
// One experiment's configuration, loaded from a TOML file (plus --set overrides and the presets it
// names), validated as a whole before anything runs.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hardware/cluster_spec.hpp"
#include "hardware/gpu_spec.hpp"
#include "hardware/topology.hpp"
#include "hardware/variability.hpp"
#include "models/model_spec.hpp"
#include "policies/director_trigger.hpp"
#include "policies/drift_trigger.hpp"
#include "sim/serving/expert_cost_profile.hpp"
#include "sim/serving/serving_config.hpp"
#include "workloads/request_generator.hpp"
#include "workloads/synthetic_router.hpp"
#include "workloads/trace_replay.hpp"

namespace toml {
inline namespace v3 {
class table;
}
}  // namespace toml

namespace epsim::experiments {

struct PolicyConfig {
  std::string placement = "linear";
  std::string routing = "even";
  std::shared_ptr<const toml::table> placement_options;  ///< [policy.placement_options], validated
  std::shared_ptr<const toml::table> routing_options;    ///< [policy.routing_options], validated
  std::int64_t load_window_steps = 32;    ///< steps of routing a load-aware placement sees before the run
  std::int64_t load_window_tokens = 512;  ///< tokens per profiled step (synthetic routing)
  /// Synthetic routing: "warmup" records real steps of a run with the linear placement (GEM's step 1),
  /// "synthetic" draws steps of load_window_tokens tokens from a router of its own.
  std::string load_window = "warmup";
  std::int64_t load_window_skip_steps = 100;  ///< warmup: ramp-up steps not recorded
  std::string rebalance = "none";             ///< "none", "periodic" (vLLM-style EPLB) or "drift" (ViBE recalibration)
  std::int64_t rebalance_window_steps = 64;
  std::int64_t rebalance_interval_steps = 256;
  std::string rebalance_mode = "stop_the_world";  ///< "overlapped", or "compute_phases" (DIRECTOR's)
  double migration_max_gb_per_step = 0.0;         ///< compute_phases: bytes a step may move (0 = no bound)
  policies::DirectorTriggerOptions director;      ///< rebalance = "director"
  policies::DriftOptions drift;                   ///< rebalance = "drift"
  serving::CostProfileConfig cost_profile;        ///< the C_g(n) curves policies see
};

struct ExperimentConfig {
  std::string source;  ///< file the config came from ("embedded demo" for the built-in one)
  std::uint64_t seed = 42;
  models::ModelSpec model;
  hardware::GpuSpec gpu;
  hardware::ClusterSpec cluster;
  hardware::VariabilityConfig variability;
  /// "graph": all-to-alls costed exactly on the network graph; "ports": per-GPU port model; "auto":
  /// graph for EP groups of at most graph_max_gpus GPUs, ports above.
  std::string collective_model = "auto";
  int graph_max_gpus = 16;
  int ep_size = 0;
  int redundant_experts = 0;  ///< extra expert slots per EP group beyond one per logical expert
  workloads::WorkloadConfig workload;
  std::string routing_source = "synthetic";  ///< "synthetic" or "trace"
  workloads::SyntheticRouterConfig router;
  workloads::TraceReplayConfig trace;
  PolicyConfig policy;
  serving::ServingConfig serving;
  /// Disaggregated prefill / decode pools (prefill_groups = 0: co-located).
  struct Disaggregation {
    int prefill_groups = 0;                        ///< the first EP groups form the prefill pool
    std::optional<hardware::GpuSpec> prefill_gpu;  ///< the prefill pool's GPU model, when it differs
  } disaggregation;
  /// Optional outputs of `run`.
  struct Outputs {
    bool steps_csv = false;
    bool tokens_csv = false;
    bool layers_csv = false;
    std::int64_t layers_every = 100;  ///< layers.csv: every n-th step of each group
    bool timeline = false;
    std::int64_t timeline_steps = 20;  ///< timeline.json: the first n steps of each group
  } outputs;
  /// The effective configuration (file + --set), for the echo in summary.json; JSON text.
  std::string echo_json;

  int slots_per_gpu() const { return (static_cast<int>(model.routed_experts) + redundant_experts) / ep_size; }
};

/// Loads and validates `path`; `sets` are "key=value" overrides (TOML values; bare words are strings).
/// Throws core::ConfigError naming the file, the key and what was expected.
ExperimentConfig load_config(const std::string& path, const std::vector<std::string>& sets);
/// The same from TOML text (e.g. the embedded demo), `source` naming it in messages.
ExperimentConfig load_config_text(std::string_view text, const std::string& source,
                                  const std::vector<std::string>& sets);

/// The static speed factor of every GPU: drawn from cfg.variability with the run's seed.
std::vector<double> resolved_speed_factors(const ExperimentConfig& cfg);

/// The demo configuration shipped in the binary (examples/demo.toml).
std::string_view embedded_demo_config();

}  // namespace epsim::experiments
