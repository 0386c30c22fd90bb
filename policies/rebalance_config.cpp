// SPDX-License-Identifier: Apache-2.0
#include "policies/rebalance_config.hpp"

#include <array>
#include <optional>

#include <toml++/toml.h>

#include "policies/registry.hpp"

namespace epsim::policies {

namespace {
constexpr std::string_view k_trigger_key = "trigger";  // what `policy.rebalance = "NAME"` stands for
}  // namespace

void expand_rebalance_shorthand(toml::table& config) {
  if (toml::table* policy = config.get_as<toml::table>("policy")) {
    if (const toml::value<std::string>* name = policy->get_as<std::string>("rebalance")) {
      toml::table expanded;
      expanded.insert_or_assign(k_trigger_key, name->get());
      policy->insert_or_assign("rebalance", std::move(expanded));
    }
  }
}

RebalanceConfig parse_rebalance(core::ParamTable& policy) {
  // "auto" is no mode of its own: it asks the trigger for its default.
  static constexpr std::array<core::Choice<std::optional<MigrationMode>>, 6> k_migrations{
      {{"auto", std::nullopt},
       {"stop_the_world", MigrationMode::stop_the_world},
       {"overlapped", MigrationMode::overlapped},
       {"compute_phases", MigrationMode::compute_phases},
       {"layer_by_layer", MigrationMode::layer_by_layer},
       {"chunked", MigrationMode::chunked}}};
  const Registry<TriggerFactory>& registry = trigger_registry();
  auto t = policy.table("rebalance",
                        "re-placement during serving: the trigger, its options and how weights migrate "
                        "(policy.rebalance = \"NAME\" is short for [policy.rebalance] trigger = \"NAME\")",
                        k_trigger_key);
  RebalanceConfig c;
  c.trigger_name = t.string(k_trigger_key, "none",
                            "re-placement during serving: " + fmt::format("{}", fmt::join(registry.names(), ", ")) +
                                " (epsim list policies)");
  if (const std::string unknown = registry.unknown_message(c.trigger_name); !unknown.empty()) {
    t.fail(k_trigger_key, unknown);
  }
  const std::optional<MigrationMode> migration = t.choice<std::optional<MigrationMode>>(
      "migration", std::nullopt,
      "how expert weights move: serving stops (stop_the_world), goes on with the old placement (overlapped), "
      "they move only in the compute phases of steps (compute_phases, DIRECTOR's), or one layer after another "
      "while serving goes on, each layer switching when its experts land (layer_by_layer, vLLM's async EPLB and "
      "TensorRT-LLM's online EPLB), or in chunks of layers, each stopping the group at a step boundary (chunked, "
      "SGLang's and ATOM's layers per chunk); auto = the trigger's default",
      k_migrations);
  c.migration_max_bytes_per_step = t.real("migration_max_gb_per_step", 0.0,
                                          "compute_phases: GB one step may move (0 = no bound)", core::k_non_negative) *
                                   1e9;
  c.migration_layer_overhead_ns =
      t.real("migration_layer_overhead_ms", 0.0,
             "network modes: fixed engine time per layer whose experts move (a layer's send/receive batch, its "
             "synchronisation and buffer copies), on top of the transfers (0 = transfer-bound; docs/policies.md)",
             core::RealBounds{0.0, 60000.0, false}) *
      1e6;
  c.migration_layers_per_chunk = static_cast<int>(
      t.integer("migration_layers_per_chunk", 1,
                "chunked: consecutive layers moved at one step boundary (SGLang's eplb_rebalance_layers_per_chunk; all "
                "layers in one chunk is stop_the_world)",
                {1, 1 << 16}));
  c.trigger = registry.create(c.trigger_name, t);  // parses the trigger's own options and finishes the table
  c.migration = migration.value_or(c.trigger ? c.trigger->default_migration() : MigrationMode::stop_the_world);
  return c;
}

}  // namespace epsim::policies
