// SPDX-License-Identifier: Apache-2.0
// Bad configurations must fail at load with one message naming the source, the key and what was
// expected. Each case edits a known-good config (tests/data/small.toml).
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "experiments/assembly/experiment_config.hpp"

using namespace epsim;
using Catch::Contains;

namespace {

std::string good_config() {
  std::ifstream in(std::string(EPSIM_TEST_DATA_DIR) + "/small.toml");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Replaces the first occurrence of `from` in the good config (which must contain it).
std::string edit(const std::string& from, const std::string& to) {
  std::string text = good_config();
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

std::string error_of(const std::string& text, const std::vector<std::string>& sets = {}) {
  try {
    experiments::load_config_text(text, "bad.toml", sets);
  } catch (const core::ConfigError& e) {
    return e.what();
  }
  FAIL("expected a ConfigError");
  return "";
}

}  // namespace

TEST_CASE("the good config loads") {
  const auto cfg = experiments::load_config_text(good_config(), "small.toml", {});
  REQUIRE(cfg.model.name == "Mixtral-8x7B");
  REQUIRE(cfg.cluster.num_gpus() == 4);
  REQUIRE(cfg.slots_per_gpu() == 2);
  REQUIRE(cfg.variability.factors[1] == 0.9);
}

TEST_CASE("config errors name the file, the key and what was expected") {
  struct Case {
    std::string text;
    std::vector<std::string> sets;
    std::string expected;
  };
  // The line of the workload rate in the good config, for the TOML syntax error case.
  const std::string good = good_config();
  const auto rate_line =
      1 + std::count(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(good.find("rate_rps")), '\n');
  const std::vector<Case> cases = {
      // 1. unknown top-level table
      {good_config() + "\n[fancy]\nx = 1\n",
       {},
       "bad.toml: fancy: unknown key; valid keys here are: calibration, cluster, communication, disaggregation, gpu"},
      // 2. misspelt key in a section
      {edit("rate_rps = 4.0", "rate_rsp = 4.0"), {}, "bad.toml: workload.rate_rsp: unknown key; valid keys here are:"},
      // 3. wrong type
      {edit("rate_rps = 4.0", "rate_rps = \"fast\""),
       {},
       "bad.toml: workload.rate_rps: expected a number in [1e-06, 10000000], got the string \"fast\""},
      // 4. out of range
      {edit("rate_rps = 4.0", "rate_rps = -2.0"),
       {},
       "bad.toml: workload.rate_rps: expected a number in [1e-06, 10000000], got -2"},
      // 5. unknown model preset, with the valid names
      {edit("\"mixtral-8x7b\"", "\"mixtral-9x9b\""),
       {},
       "bad.toml: model.preset: unknown models preset \"mixtral-9x9b\"; valid names are: deepseek-v2-lite, "
       "deepseek-v3, deepseek-v3.2, deepseekmoe-16b"},
      // 6. unknown GPU preset
      {edit("\"h100\"", "\"h900\""),
       {},
       "bad.toml: gpu.preset: unknown gpus preset \"h900\"; valid names are: a100, b200, b300, gb200, gb300, h100, "
       "h100-calibrated, h20, h200, h800, l40, mi300x"},
      // 7. unknown placement policy
      {edit("placement = \"linear\"", "placement = \"magic\""),
       {},
       "bad.toml: policy.placement: unknown placement policy \"magic\"; valid values are: linear"},
      // 8. unknown routing policy
      {edit("routing = \"even\"", "routing = \"odd\""),
       {},
       "bad.toml: policy.routing: unknown routing policy \"odd\"; valid values are: even"},
      // 9. top-k larger than the experts (override on top of the preset)
      {edit("preset = \"mixtral-8x7b\"", "preset = \"mixtral-8x7b\"\ntop_k = 9"),
       {},
       "bad.toml: model.top_k: must be <= routed_experts (8), got 9"},
      // 10. EP size not dividing the GPUs
      {edit("ep_size = 4", "ep_size = 3"), {}, "bad.toml: parallel.ep_size: must divide the cluster's 4 GPUs, got 3"},
      // 11. speed factor list of the wrong length
      {edit("speed_factors = [1.0, 0.9, 1.0, 1.0]", "speed_factors = [1.0, 0.9]"),
       {},
       "bad.toml: cluster.speed_factors: expected one factor per GPU (4 = 2 nodes x 2), got 2"},
      // 12. a non-positive speed factor
      {edit("speed_factors = [1.0, 0.9", "speed_factors = [1.0, 0.0"),
       {},
       "bad.toml: cluster.speed_factors: element 1: expected a number in (0, 10]"},
      // 13. experts + redundant slots not divisible among GPUs
      {edit("ep_size = 4", "ep_size = 4\nredundant_experts = 2"),
       {},
       "bad.toml: parallel.redundant_experts: routed experts + redundant slots (8 + 2) must divide evenly over ep_size "
       "= 4 GPUs"},
      // 14. invalid TOML
      {edit("rate_rps = 4.0", "rate_rps = = 4.0"),
       {},
       "bad.toml: line " + std::to_string(rate_line) + ", column 12: invalid TOML"},
      // 15. uniform lengths with min > max
      {edit("min = 64", "min = 4096"), {}, "bad.toml: workload.prompt_tokens.min: must be <= max (1024)"},
      // 16. a workload that never ends
      {edit("num_requests = 40", "num_requests = 0"),
       {},
       "bad.toml: workload.num_requests: set num_requests or duration_s"},
      // 17. zero token budget
      {edit("max_batch_tokens = 2048", "max_batch_tokens = 0"),
       {},
       "bad.toml: scheduler.max_batch_tokens: expected an integer in [1, 16777216], got 0"},
      // 18. a section that is not a table
      {edit("[parallel]", "[cluster.inter_node.x]\n[parallel]"), {}, "bad.toml: cluster.inter_node.x: unknown key"},
      // 19. unknown attention kind in an override
      {edit("preset = \"mixtral-8x7b\"", "preset = \"mixtral-8x7b\"\nattention = \"linear\""),
       {},
       "bad.toml: model.attention: unknown value \"linear\"; valid values are: gqa, mla"},
      // 20. a model with no MoE layer
      {edit("preset = \"mixtral-8x7b\"",
            "preset = \"mixtral-8x7b\"\nfirst_dense_layers = 32\ndense_intermediate_size = 1024"),
       {},
       "bad.toml: model.first_dense_layers: must be < num_layers (32)"},
      // 21. unknown routing source
      {edit("source = \"synthetic\"", "source = \"oracle\""),
       {},
       "bad.toml: routing.source: unknown value \"oracle\"; valid values are: synthetic"},
      // 22. a model without a preset misses required fields
      {edit("preset = \"mixtral-8x7b\"", "hidden_size = 1024"), {}, "bad.toml: model.num_layers: missing required key"},
      // 23. --set errors name --set
      {good_config(),
       {"workload.rate_rps=-1"},
       "--set: workload.rate_rps: expected a number in [1e-06, 10000000], got -1"},
      // 24. --set without '='
      {good_config(), {"workload.rate_rps"}, "--set: workload.rate_rps: expected key=value"},
      // 25. an EP group larger than a node that does not span whole nodes
      {good_config(),
       {"cluster.nodes=3", "cluster.gpus_per_node=4", "cluster.speed_factors=[1,1,1,1,1,1,1,1,1,1,1,1]",
        "parallel.ep_size=6"},
       "--set: parallel.ep_size: an EP group larger than a node must span whole nodes (4 GPUs each), got 6"},
      // 26. wrong type of a preset override
      {edit("preset = \"h100\"", "preset = \"h100\"\nhbm_gbps = true"),
       {},
       "bad.toml: gpu.hbm_gbps: expected a number in [0.001, 10000000], got true"},
      // 27. unknown link type, with the valid ones
      {edit("[parallel]", "[cluster.intra_node]\nlink = \"nvlink9\"\n[parallel]"),
       {},
       "bad.toml: cluster.intra_node.link: unknown link type \"nvlink9\"; valid values are: eth_100g"},
      // 28. unknown cluster preset
      {edit("preset = \"hgx-h100\"", "preset = \"hgx-h900\""),
       {},
       "bad.toml: cluster.preset: unknown clusters preset \"hgx-h900\"; valid names are: gb200-nvl72"},
      // 29. power caps, one per GPU
      {edit("speed_factors = [1.0, 0.9, 1.0, 1.0]",
            "[cluster.variability]\nkind = \"power_cap\"\npower_caps_w = [418, 600]"),
       {},
       "bad.toml: cluster.variability.power_caps_w: expected one cap per GPU (4), got 2"},
      // 30. both speed factors and a variability table
      {edit("speed_factors = [1.0, 0.9, 1.0, 1.0]",
            "speed_factors = [1.0, 0.9, 1.0, 1.0]\n[cluster.variability]\nkind = \"normal\""),
       {},
       "bad.toml: cluster.speed_factors: give either speed_factors or [cluster.variability], not both"},
      // 31. a multi-node cluster without a scale-out fabric
      {good_config(),
       {"cluster.scale_out=none"},
       "--set: cluster.scale_out: a cluster of 2 nodes needs a scale-out fabric (rail or fat_tree)"},
      // 32. unknown variability preset
      {edit("speed_factors = [1.0, 0.9, 1.0, 1.0]", "[cluster.variability]\npreset = \"gem-h100\""),
       {},
       "bad.toml: cluster.variability.preset: unknown variability preset \"gem-h100\"; valid names are: gem-l40, "
       "sinha-sc22"},
      // 33. a batch of no requests
      {good_config(),
       {"workload.arrival=\"batches\"", "workload.batch_size=0"},
       "--set: workload.batch_size: expected an integer in [1, 1048576], got 0"},
      // 34. an unknown batching
      {good_config(),
       {"scheduler.batching=\"dynamic\""},
       "--set: scheduler.batching: unknown value \"dynamic\"; valid values are: continuous, static"},
      // 35. DIRECTOR's re-optimisation moment and prediction scope, in the trigger's own options
      {good_config(),
       {"policy.rebalance.trigger=director", "policy.rebalance.when=\"sometimes\""},
       "--set: policy.rebalance.when: unknown value \"sometimes\"; valid values are: interval, arrivals"},
      {good_config(),
       {"policy.rebalance.trigger=director", "policy.rebalance.predict=\"everything\""},
       "--set: policy.rebalance.predict: unknown value \"everything\"; valid values are: outstanding, queued"},
      // 36. a minimum gain of 100 %
      {good_config(),
       {"policy.rebalance.trigger=director", "policy.rebalance.min_gain=1.0"},
       "--set: policy.rebalance.min_gain: expected a number in"},
      // 37. an option of another trigger, and an unknown migration mode
      {good_config(),
       {"policy.rebalance.trigger=periodic", "policy.rebalance.min_gain=0.1"},
       "--set: policy.rebalance.min_gain: unknown key; valid keys here are: interval_steps, migration, "
       "migration_layer_overhead_ms, migration_layers_per_chunk, migration_max_gb_per_step, trigger, window_steps"},
      {good_config(),
       {"policy.rebalance=periodic", "policy.rebalance.migration=teleport"},
       "--set: policy.rebalance.migration: unknown value \"teleport\"; valid values are: auto, stop_the_world, "
       "overlapped, compute_phases"},
      // 38. the old flat DIRECTOR keys are gone: the message lists [policy]'s keys
      {good_config(), {"policy.director_mode=reactive"}, "--set: policy.director_mode: unknown key"},
      // 39. what run would reject, caught here: linear cannot give each of 16 GPUs one of Mixtral's 8 experts
      {edit("speed_factors = [1.0, 0.9, 1.0, 1.0]", ""),
       {"cluster.nodes=8", "parallel.ep_size=16", "parallel.redundant_experts=8"},
       "bad.toml: policy.placement: linear places one copy of each expert: 8 experts cannot cover an EP group of 16 "
       "GPUs (use \"replicated\""},
      // 40. the optimising policies' EP bounds (docs/policies.md, Bounds), refused before anything is placed:
      // GEM at 256 GPUs with its defaults, 256 x sqrt(480 / (120 x 16)) = 128 with 4x the restarts
      {edit("speed_factors = [1.0, 0.9, 1.0, 1.0]", ""),
       {"cluster.nodes=256", "parallel.ep_size=512", "parallel.redundant_experts=504", "policy.placement=gem"},
       "bad.toml: policy.placement: \"gem\" handles EP groups of at most 256 GPUs (larger ones take minutes or "
       "more: docs/policies.md, Bounds), got 512; use a smaller ep_size or another policy"},
      {edit("speed_factors = [1.0, 0.9, 1.0, 1.0]", ""),
       {"cluster.nodes=128", "parallel.ep_size=256", "parallel.redundant_experts=248", "policy.placement=gem",
        "policy.placement_options.restarts=120"},
       "bad.toml: policy.placement: \"gem\" handles EP groups of at most 128 GPUs"},
      // DIRECTOR at 32, as a placement and as the online trigger
      {edit("speed_factors = [1.0, 0.9, 1.0, 1.0]", ""),
       {"cluster.nodes=32", "parallel.ep_size=64", "parallel.redundant_experts=56", "policy.placement=director"},
       "bad.toml: policy.placement: \"director\" handles EP groups of at most 32 GPUs (larger ones take minutes"},
      {edit("speed_factors = [1.0, 0.9, 1.0, 1.0]", ""),
       {"cluster.nodes=32", "parallel.ep_size=64", "parallel.redundant_experts=56", "policy.placement=replicated",
        "policy.rebalance=director"},
       "bad.toml: policy.rebalance: \"director\" handles EP groups of at most 32 GPUs"},
      // 41. the cluster's size: 16,384 GPUs at most, said before any graph is built
      {edit("speed_factors = [1.0, 0.9, 1.0, 1.0]", ""),
       {"cluster.nodes=8193"},
       "--set: cluster.nodes: 8193 nodes x 2 GPUs = 16386 GPUs; epsim models clusters of at most 16384 GPUs"},
  };
  int i = 0;
  for (const Case& c : cases) {
    ++i;
    INFO("case " << i);
    REQUIRE_THAT(error_of(c.text, c.sets), Contains(c.expected));
  }
}

TEST_CASE("set overrides change values and keep the rest of the file") {
  const auto cfg = experiments::load_config_text(good_config(), "small.toml",
                                                 {"workload.rate_rps=9.5", "policy.placement=linear", "model.top_k=1"});
  REQUIRE(cfg.workload.arrivals.rate_rps == 9.5);
  REQUIRE(cfg.model.top_k == 1);
  REQUIRE(cfg.model.hidden_size == 4096);
}

TEST_CASE("policy.rebalance as a string is the trigger, and its options merge from any layer") {
  // The shorthand in one --set, an option in the next: both hold.
  const auto a = experiments::load_config_text(good_config(), "small.toml",
                                               {"policy.rebalance=periodic", "policy.rebalance.interval_steps=9"});
  REQUIRE(a.policy.rebalance.trigger_name == "periodic");
  REQUIRE(a.policy.rebalance.trigger != nullptr);
  REQUIRE(a.policy.rebalance.migration == policies::MigrationMode::stop_the_world);
  // The shorthand in the file, an option and a migration from --set.
  const auto b =
      experiments::load_config_text(edit("[policy]", "[policy]\nrebalance = \"drift\""), "small.toml",
                                    {"policy.rebalance.threshold=0.1", "policy.rebalance.migration=overlapped"});
  REQUIRE(b.policy.rebalance.trigger_name == "drift");
  REQUIRE(b.policy.rebalance.migration == policies::MigrationMode::overlapped);
  // What a trigger declares it needs is what the simulation will profile: the drift trigger takes its
  // references from the run's own windows, so it needs curves but no load window.
  REQUIRE(b.policy.needs.cost_curves);
  REQUIRE_FALSE(b.policy.needs.load_window);
  REQUIRE_FALSE(b.policy.needs.predictions);
  // The echo shows the expanded table.
  REQUIRE_THAT(b.echo_json, Contains("\"trigger\" : \"drift\""));
}

TEST_CASE("[speculative] errors name the key and what was expected") {
  struct Case {
    std::vector<std::string> sets;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{"speculative.method=eagle"}, "--set: speculative.method: "},
      {{"speculative.method=mtp"},
       "speculative.acceptance_rates: give exactly one acceptance model: acceptance_rates (1 numbers), "
       "acceptance_lengths (2 numbers) or acceptance_preset (deepseek-v3-mtp, deepseek-v3-mtp-chain)"},
      {{"speculative.method=mtp", "speculative.draft_tokens=2", "speculative.acceptance_rates=[0.9]"},
       "--set: speculative.acceptance_rates: expected draft_tokens = 2 rates, got 1"},
      {{"speculative.method=mtp", "speculative.acceptance_rates=[1.5]"},
       "--set: speculative.acceptance_rates: element 0: expected a number in [0, 1]"},
      {{"speculative.method=mtp", "speculative.acceptance_lengths=[0.5, 0.4]"},
       "--set: speculative.acceptance_lengths: the probabilities must sum to 1, got 0.9"},
      {{"speculative.method=mtp", "speculative.acceptance_lengths=[1.0]"},
       "--set: speculative.acceptance_lengths: expected draft_tokens + 1 = 2 probabilities (A = 0..1), got 1"},
      {{"speculative.method=mtp", "speculative.acceptance_rates=[0.9]",
        "speculative.acceptance_preset=deepseek-v3-mtp"},
       "give exactly one acceptance model"},
      {{"speculative.method=mtp", "speculative.acceptance_preset=eagle"},
       "--set: speculative.acceptance_preset: unknown preset \"eagle\"; valid presets are: deepseek-v3-mtp, "
       "deepseek-v3-mtp-chain"},
      {{"speculative.method=mtp", "speculative.draft_tokens=3", "speculative.acceptance_preset=deepseek-v3-mtp"},
       "--set: speculative.acceptance_preset: \"deepseek-v3-mtp\" gives rates for k <= 1 draft tokens, got "
       "draft_tokens = 3"},
      {{"speculative.acceptance_rates=[0.9]"}, "speculative.method: speculative keys are set but method = \"none\""},
      {{"speculative.method=mtp", "speculative.acceptance_rates=[0.9]", "speculative.draft_model.layers=2"},
       "speculative.method: [speculative.draft_model] is set but method is not \"draft_model\""},
      {{"speculative.method=draft_model", "speculative.acceptance_rates=[0.9]",
        "speculative.draft_model.num_kv_heads=5"},
       "--set: speculative.draft_model.num_kv_heads: must divide num_heads (32)"},
      {{"speculative.method=mtp", "speculative.draft_tokens=17"}, "--set: speculative.draft_tokens: "},
  };
  int i = 0;
  for (const Case& c : cases) {
    ++i;
    INFO("case " << i);
    REQUIRE_THAT(error_of(good_config(), c.sets), Contains(c.expected));
  }
  // A good one loads, with its acceptance model.
  const auto cfg = experiments::load_config_text(
      good_config(), "small.toml",
      {"speculative.method=mtp", "speculative.draft_tokens=2", "speculative.acceptance_rates=[0.8, 0.5]"});
  REQUIRE(cfg.serving.speculative.enabled());
  REQUIRE(cfg.serving.speculative.acceptance.mean_accepted() == Approx(0.8 + 0.4));
}
