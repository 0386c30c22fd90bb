#pragma once
// One experiment's configuration, loaded from a TOML file (plus --set overrides and the presets it
// names), validated as a whole before anything runs.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "experiments/measured_cost.hpp"
#include "hardware/cluster_spec.hpp"
#include "hardware/gpu_spec.hpp"
#include "hardware/hardware_config.hpp"
#include "hardware/variability.hpp"
#include "models/model_spec.hpp"
#include "policies/policy_config.hpp"
#include "sim/serving/pool_shape.hpp"
#include "sim/serving/serving_config.hpp"
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
  hardware::EpCommConfig comm;
  std::optional<hardware::EpCommConfig> prefill_comm;  ///< [communication.prefill]
  int ep_size = 0;
  int redundant_experts = 0;  ///< extra expert slots per EP group beyond one per logical expert
  workloads::WorkloadConfig workload;
  workloads::RoutingConfig routing;
  policies::PolicyConfig policy;
  serving::ServingConfig serving;
  serving::DisaggregationConfig disaggregation;
  OutputsConfig outputs;
  MeasuredCostConfig measured;  ///< [calibration]: measured tables as the cost model
  /// The effective configuration (file + --set), for the echo in summary.json; JSON text.
  std::string echo_json;
  /// Settings that are valid but have no effect or miss a prerequisite (the CLI prints them once).
  std::vector<std::string> warnings;

  std::uint64_t seed_of(SeedFamily f) const {
    return (f == SeedFamily::workload ? workload_seed : cluster_seed).value_or(seed);
  }
  /// Expert slots per GPU of a decode (or co-located) EP group.
  int slots_per_gpu() const { return slots_per_gpu(ep_size); }
  /// ... of an EP group of `gpus` GPUs (the prefill pool's: prefill_slots_per_gpu()).
  int slots_per_gpu(int gpus) const { return (static_cast<int>(model.routed_experts) + redundant_experts) / gpus; }
  int prefill_slots_per_gpu() const { return slots_per_gpu(pools().prefill.ep_size); }
  /// The prefill and decode pools (one pool of every group when co-located).
  serving::PoolLayout pools() const {
    return serving::pool_layout(cluster.num_gpus(), ep_size, disaggregation.prefill_groups,
                                disaggregation.prefill_ep_size);
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
