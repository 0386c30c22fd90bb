// SPDX-License-Identifier: Apache-2.0
#pragma once
// One experiment's configuration, loaded from a TOML file (plus --set overrides and the presets it
// names), validated as a whole before anything runs.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "experiments/assembly/measured_cost.hpp"
#include "hardware/cluster_spec.hpp"
#include "hardware/gpu_spec.hpp"
#include "hardware/hardware_config.hpp"
#include "hardware/variability.hpp"
#include "models/model_spec.hpp"
#include "policies/policy_config.hpp"
#include "sim/pool_spec.hpp"
#include "sim/serving_config.hpp"
#include "workloads/request_generator.hpp"
#include "workloads/routing_config.hpp"

namespace epsim::experiments {

/// Optional outputs of `run` ([output]).
struct OutputsConfig {
  bool steps_csv = false;
  bool tokens_csv = false;
  bool layers_csv = false;
  std::int64_t layers_every = 100;  ///< layers.csv: every n-th step of each group
  bool timeline = false;
  std::int64_t timeline_steps = 20;  ///< timeline.json: the first n steps of each group (0 = all)
  double timeline_max_mib = 64.0;    ///< timeline.json's size cap: past it, steps are sampled
  bool events_csv = false;
  bool gpu_layers_csv = false;
};

/// Every section, each parsed by the layer whose struct it fills (models, hardware, workloads,
/// policies, serving); experiments/ reads [run] and [output] and checks what spans sections.
/// The families of random streams that can be seeded apart ([run] workload_seed, cluster_seed), so a
/// study can draw new clusters while keeping the workload, or the reverse.
enum class SeedFamily : std::uint8_t {
  workload,  ///< arrivals, lengths, routing (synthetic or a trace's resampling)
  cluster,   ///< static GPU speed draws, drift, jitter, cost profiling noise
};

struct ExperimentConfig {
  std::string source;       ///< file the config came from ("embedded demo" for the built-in one)
  std::uint64_t seed = 42;  ///< the run seed: policies' own randomness, and each family left unset
  std::optional<std::uint64_t> workload_seed;
  std::optional<std::uint64_t> cluster_seed;
  models::ModelSpec model;
  hardware::GpuSpec gpu;
  hardware::ClusterSpec cluster;
  hardware::VariabilityConfig variability;
  hardware::CollectiveConfig collectives;
  hardware::EpCommConfig comm;  ///< [communication]: every pool's, less its own overrides
  /// The deployment: [[pool]] entries, or the pools [parallel] and [disaggregation] stand for. Each holds
  /// its own GPU model, parallelism, communication and policies (sim/pool_spec.hpp).
  std::vector<serving::PoolSpec> pools;
  bool explicit_pools = false;  ///< the pools came from [[pool]] entries (not the shorthand)
  workloads::WorkloadConfig workload;
  workloads::RoutingConfig routing;
  policies::PolicyConfig policy;  ///< [policy]: every pool's, less its own [pool.policy]
  serving::ServingConfig serving;
  OutputsConfig outputs;
  MeasuredCostConfig measured;  ///< [calibration]: measured tables as the cost model
  /// The effective configuration (file + --set), for the echo in summary.json; JSON text.
  std::string echo_json;
  /// Settings that are valid but have no effect or miss a prerequisite (the CLI prints them once).
  std::vector<std::string> warnings;

  std::uint64_t seed_of(SeedFamily f) const {
    return (f == SeedFamily::workload ? workload_seed : cluster_seed).value_or(seed);
  }
  /// The pool whose figures summaries report as the deployment's: the first that decodes.
  const serving::PoolSpec& primary_pool() const { return serving::primary_pool(pools); }
  /// Its EP size and expert slots per GPU.
  int ep_size() const { return primary_pool().shape.ep_size; }
  int slots_per_gpu() const { return primary_pool().slots_per_gpu(model.routed_experts); }
  /// The GPU model of `pool`'s GPUs.
  const hardware::GpuSpec& gpu_of(const serving::PoolSpec& pool) const { return pool.gpu ? *pool.gpu : gpu; }
  /// Whether requests move between pools (a prefill pool hands off to decode pools).
  bool disaggregated() const {
    return std::any_of(pools.begin(), pools.end(), [](const serving::PoolSpec& p) { return !p.handoff_to.empty(); });
  }
};

/// Parses TOML text; a syntax error is a core::ConfigError naming `source`, the line and the column.
toml::table parse_config_text(std::string_view text, const std::string& source);

/// Loads and validates `path`; `sets` are "key=value" overrides (TOML values; bare words are strings).
/// Throws core::ConfigError naming the file, the key and what was expected.
ExperimentConfig load_config(const std::string& path, const std::vector<std::string>& sets);
/// The same from TOML text (e.g. the embedded demo), `source` naming it in messages.
ExperimentConfig load_config_text(std::string_view text, const std::string& source,
                                  const std::vector<std::string>& sets);

/// The same from a parsed base table and a table of overrides (a study point), `overrides_source`
/// naming the overrides in messages.
ExperimentConfig load_config_tables(toml::table file, const std::string& source, const toml::table& overrides,
                                    const std::string& overrides_source);

/// The static speed factor of every GPU: drawn from cfg.variability with the run's seed.
std::vector<double> resolved_speed_factors(const ExperimentConfig& cfg);

/// The demo configuration shipped in the binary (examples/demo.toml).
std::string_view embedded_demo_config();

}  // namespace epsim::experiments
