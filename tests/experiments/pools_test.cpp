// SPDX-License-Identifier: Apache-2.0
// Disaggregated pools of different EP sizes: a prefill pool of EP16 and a decode pool of EP8 on 4 nodes
// of 8 GPUs. Group sizes and first GPUs, each pool's placement and KV cache, where requests are
// prefilled and decoded, the per-GPU metrics' offsets, the run's outputs, the config errors, and that a
// prefill EP size equal to ep_size changes nothing.
#include <catch2/catch.hpp>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "experiments/assembly/build_simulation.hpp"
#include "experiments/assembly/experiment_config.hpp"
#include "experiments/assembly/results_writer.hpp"
#include "experiments/assembly/run_outputs.hpp"
#include "sim/memory_plan.hpp"
#include "sim/pool_spec.hpp"

using namespace epsim;

namespace {

// OLMoE-1B-7B (64 experts, top-8, 16 MoE layers) on 4 HGX-H100 nodes of 8 GPUs: group 0 = EP16 on nodes
// 0-1 prefills, groups 1 and 2 = EP8 on nodes 2 and 3 decode.
constexpr const char* k_pools = R"(
[run]
seed = 5

[model]
preset = "olmoe-1b-7b"

[cluster]
preset = "hgx-h100"
nodes = 4
gpus_per_node = 8

[parallel]
ep_size = 8

[disaggregation]
prefill_groups = 1
prefill_ep_size = 16

[workload]
rate_rps = 50.0
num_requests = 12

[workload.prompt_tokens]
distribution = "uniform"
min = 64
max = 512

[workload.output_tokens]
distribution = "fixed"
value = 5

[policy]
placement = "linear"
routing = "even"

[scheduler]
max_batch_tokens = 2048
)";

experiments::ExperimentConfig pools_config(const std::vector<std::string>& sets = {}) {
  return experiments::load_config_text(k_pools, "pools.toml", sets);
}

std::string error_of(const std::vector<std::string>& sets) {
  try {
    pools_config(sets);
  } catch (const core::ConfigError& e) {
    return e.what();
  }
  FAIL("expected a ConfigError");
  return "";
}

// Per group: the GPUs of its layers, its steps' prefill and decode tokens and all-to-all bytes between
// nodes, and each GPU's busy time.
struct PoolWatch final : serving::Observer {
  std::map<int, std::set<std::size_t>> layer_gpus;
  std::map<int, std::int64_t> prefill_tokens;
  std::map<int, std::int64_t> decode_tokens;
  std::map<int, double> inter_bytes;
  std::map<int, std::vector<double>> busy_ns;
  std::set<int> rebalanced;
  void on_rebalance(int group, core::Time /*time_ns*/, policies::RebalanceKind /*kind*/) override {
    rebalanced.insert(group);
  }
  void on_layer(const serving::LayerRecord& l) override { layer_gpus[l.group].insert(l.gpu_tokens.size()); }
  void on_step(const serving::StepRecord& s) override {
    prefill_tokens[s.group] += s.prefill_tokens;
    decode_tokens[s.group] += s.decode_tokens;
    inter_bytes[s.group] += s.inter_bytes;
    std::vector<double>& busy = busy_ns[s.group];
    busy.resize(s.gpu_busy_ns.size(), 0.0);
    for (std::size_t g = 0; g < s.gpu_busy_ns.size(); ++g) {
      busy[g] += s.gpu_busy_ns[g];
    }
  }
};

}  // namespace

TEST_CASE("pools: a prefill pool of EP16 and a decode pool of EP8 tile 4 nodes of 8 GPUs") {
  const auto cfg = pools_config();
  const std::vector<serving::PoolSpec>& pools = cfg.pools;
  REQUIRE(pools.size() == 2);
  const serving::PoolSpec& prefill = pools[0];
  const serving::PoolSpec& decode = pools[1];
  // Prefill: 1 group x 16 GPUs from GPU 0; decode: (32 - 16) / 8 = 2 groups from GPU 16.
  CHECK(prefill.name == "prefill");
  CHECK(prefill.role == serving::PoolRole::prefill);
  CHECK(prefill.shape.first_group == 0);
  CHECK(prefill.shape.groups == 1);
  CHECK(prefill.shape.ep_size == 16);
  CHECK(prefill.shape.first_gpu == 0);
  CHECK(prefill.handoff_to == std::vector<int>{1});
  CHECK(decode.name == "decode");
  CHECK(decode.role == serving::PoolRole::decode);
  CHECK(decode.shape.first_group == 1);
  CHECK(decode.shape.groups == 2);
  CHECK(decode.shape.ep_size == 8);
  CHECK(decode.shape.first_gpu == 16);
  CHECK(serving::total_groups(pools) == 3);
  CHECK(serving::max_ep_size(pools) == 16);
  CHECK(&cfg.primary_pool() == &decode);
  // Group g's first GPU: 0, 16, 24.
  CHECK(serving::pool_of_group(pools, 0).shape.group_first_gpu(0) == 0);
  CHECK(serving::pool_of_group(pools, 1).shape.group_first_gpu(1) == 16);
  CHECK(serving::pool_of_group(pools, 2).shape.group_first_gpu(2) == 24);
  CHECK(serving::pool_of_group(pools, 2).shape.ep_size == 8);
  CHECK_THROWS_AS(serving::pool_of_group(pools, 3), core::Error);
  // Groups that do not tile the cluster are refused when the config is read (the last test case).
}

TEST_CASE("pools: each pool's placement covers its own GPUs, and its KV cache follows its expert slots") {
  const auto cfg = pools_config();
  const serving::SimulationParts p = experiments::build_simulation(cfg, experiments::profile_pool_windows(cfg));
  REQUIRE(p.pools.size() == 2);
  const serving::PoolParts& prefill = p.pools[0];
  const serving::PoolParts& decode = p.pools[1];
  // 64 experts: 64 / 16 = 4 slots per prefill GPU, 64 / 8 = 8 per decode GPU. Linear: GPU g holds the
  // experts 4g .. 4g+3 (prefill) or 8g .. 8g+7 (decode).
  REQUIRE(prefill.placement.layers.size() == 16);
  REQUIRE(decode.placement.layers.size() == 16);
  for (const policies::LayerPlacement& l : prefill.placement.layers) {
    CHECK(l.num_gpus == 16);
    CHECK(l.slots_per_gpu == 4);
    for (int slot = 0; slot < 64; ++slot) {
      CHECK(l.gpu_of_slot(slot) == slot / 4);
      CHECK(l.phy2log[static_cast<std::size_t>(slot)] == slot);
    }
  }
  for (const policies::LayerPlacement& l : decode.placement.layers) {
    CHECK(l.num_gpus == 8);
    CHECK(l.slots_per_gpu == 8);
    for (int slot = 0; slot < 64; ++slot) {
      CHECK(l.gpu_of_slot(slot) == slot / 8);
      CHECK(l.phy2log[static_cast<std::size_t>(slot)] == slot);
    }
  }
  CHECK(cfg.slots_per_gpu() == 8);
  CHECK(cfg.pools[0].slots_per_gpu(cfg.model.routed_experts) == 4);
  // The prefill GPUs hold half the expert weights: more of their memory is KV cache.
  const auto blocks = [&](int slots) {
    return serving::plan_memory(cfg.model, cfg.gpu, slots, cfg.serving.scheduler, 1).kv_blocks;
  };
  CHECK(prefill.kv_blocks_per_gpu == blocks(4));
  CHECK(decode.kv_blocks_per_gpu == blocks(8));
  CHECK(prefill.kv_blocks_per_gpu > decode.kv_blocks_per_gpu);
}

TEST_CASE("pools: requests are prefilled on the EP16 pool and decoded on the EP8 pool") {
  const auto cfg = pools_config();
  serving::Simulator sim(experiments::build_simulation(cfg, experiments::profile_pool_windows(cfg)));
  PoolWatch watch;
  sim.add_observer(&watch);
  const serving::SimulationResult res = sim.run();
  REQUIRE(res.requests.size() == 12);
  std::int64_t prompts = 0;
  std::set<int> decode_groups;
  for (const serving::RequestState& r : res.requests) {
    REQUIRE(r.finished());
    prompts += r.spec.prompt_tokens;
    decode_groups.insert(r.group);  // the group that finished it
  }
  CHECK(decode_groups == std::set<int>{1, 2});  // hand-offs spread over the decode pool's groups
  CHECK(res.kv_transfers == 12);
  // Group 0's layers run on 16 GPUs, the decode groups' on 8.
  CHECK(watch.layer_gpus[0] == std::set<std::size_t>{16});
  CHECK(watch.layer_gpus[1] == std::set<std::size_t>{8});
  CHECK(watch.layer_gpus[2] == std::set<std::size_t>{8});
  // Every prompt token is prefilled in group 0, which emits each request's first token and decodes
  // nothing; the decode pool prefills nothing and decodes the other 4 tokens of each request.
  CHECK(watch.prefill_tokens[0] == prompts);
  CHECK(watch.decode_tokens[0] == 0);
  CHECK(watch.prefill_tokens[1] + watch.prefill_tokens[2] == 0);
  CHECK(watch.decode_tokens[1] + watch.decode_tokens[2] == 12 * 4);
  // The EP16 group spans nodes 0 and 1: its all-to-alls cross nodes; an EP8 group fits in its node.
  CHECK(watch.inter_bytes[0] > 0.0);
  CHECK(watch.inter_bytes[1] == 0.0);
  CHECK(watch.inter_bytes[2] == 0.0);
  // Per-GPU busy fractions (no warm-up: over the makespan) sit at each group's first GPU: 0, 16, 24.
  const std::vector<double>& frac = res.summary.gpu_busy_fraction;
  REQUIRE(frac.size() == 32);
  const double span = static_cast<double>(res.end_ns);
  const std::map<int, int> first_gpu{{0, 0}, {1, 16}, {2, 24}};
  for (const auto& [group, first] : first_gpu) {
    const std::vector<double>& busy = watch.busy_ns[group];
    REQUIRE(busy.size() == (group == 0 ? 16U : 8U));
    for (std::size_t g = 0; g < busy.size(); ++g) {
      CHECK(busy[g] > 0.0);
      CHECK(frac[static_cast<std::size_t>(first) + g] == Approx(busy[g] / span).epsilon(1e-12));
    }
  }
}

TEST_CASE("pools: outputs and the summary describe both pools") {
  const auto cfg = pools_config({"output.gpu_layers_csv=true", "output.timeline=true"});
  serving::Simulator sim(experiments::build_simulation(cfg, experiments::profile_pool_windows(cfg)));
  const experiments::RunOutputs outputs(sim, cfg);
  const serving::SimulationResult res = sim.run();
  const std::string csv = outputs.logs().gpu_layers->csv();
  // group,moe_layer,gpu,...: group 0 has GPUs 0 .. 15, a decode group 0 .. 7.
  CHECK(csv.find("\n0,0,15,") != std::string::npos);
  CHECK(csv.find("\n1,0,7,") != std::string::npos);
  CHECK(csv.find("\n1,0,8,") == std::string::npos);
  CHECK(csv.find("\n2,15,7,") != std::string::npos);
  const auto j = nlohmann::json::parse(experiments::summary_json(cfg, res));
  CHECK(j["resolved"]["ep_size"] == 8);
  CHECK(j["resolved"]["ep_groups"] == 3);
  CHECK(j["resolved"]["slots_per_gpu"] == 8);
  CHECK(j["resolved"]["prefill_ep_size"] == 16);
  CHECK(j["resolved"]["prefill_slots_per_gpu"] == 4);
  CHECK(experiments::human_summary(cfg, res).rfind(
            "OLMoE-1B-7B on 4 node(s) x 8 NVIDIA H100 SXM 80GB (32 GPUs, prefill 1 x EP16, decode 2 x EP8)", 0) == 0);
}

TEST_CASE("pools: each group's rebalance trigger re-places for its own pool") {
  const auto cfg = pools_config({"policy.placement=\"eplb\"", "policy.load_window=\"synthetic\"",
                                 "policy.rebalance.trigger=\"periodic\"", "policy.rebalance.interval_steps=2",
                                 "policy.rebalance.window_steps=2", "workload.num_requests=24"});
  serving::SimulationParts parts = experiments::build_simulation(cfg, experiments::profile_pool_windows(cfg));
  REQUIRE(parts.pools.size() == 2);
  CHECK(parts.pools[0].placement.layers[0].num_gpus == 16);
  CHECK(parts.pools[1].placement.layers[0].num_gpus == 8);
  serving::Simulator sim(std::move(parts));
  PoolWatch watch;
  sim.add_observer(&watch);
  const serving::SimulationResult res = sim.run();
  CHECK(res.rebalances > 0);
  CHECK(watch.rebalanced == std::set<int>{0, 1, 2});  // the prefill group's trigger too
  for (const serving::RequestState& r : res.requests) {
    CHECK(r.finished());
  }
  // After re-placements the groups still price their own GPUs.
  CHECK(watch.layer_gpus[0] == std::set<std::size_t>{16});
  CHECK(watch.layer_gpus[1] == std::set<std::size_t>{8});
}

TEST_CASE("pools: bad prefill EP sizes name the key and the numbers") {
  CHECK(error_of({"disaggregation.prefill_ep_size=12"}) ==
        "--set: disaggregation.prefill_ep_size: an EP group larger than a node must span whole nodes (8 GPUs each), "
        "got 12");
  CHECK(error_of({"disaggregation.prefill_ep_size=3"}) ==
        "--set: disaggregation.prefill_ep_size: an EP group inside a node must divide its 8 GPUs, got 3");
  CHECK(error_of({"disaggregation.prefill_groups=2"}) ==
        "pools.toml: disaggregation.prefill_ep_size: the prefill pool's 2 groups x 16 GPUs = 32 must leave GPUs of "
        "the cluster's 32 for decoding");
  CHECK(error_of({"parallel.ep_size=16", "disaggregation.prefill_ep_size=8"}) ==
        "--set: disaggregation.prefill_ep_size: the decode pool's 24 GPUs (the cluster's 32 less 1 groups x 8 for "
        "prefill) must divide into groups of parallel.ep_size = 16");
  // 64 + 8 redundant slots divide over EP8 (9 each) but not over EP16.
  CHECK(error_of({"parallel.redundant_experts=8"}) ==
        "pools.toml: disaggregation.prefill_ep_size: routed experts + redundant slots (64 + 8) must divide evenly "
        "over the prefill group's 16 GPUs");
  // 2 prefill groups of 4 GPUs leave 24 = 3 x 8 to decode, but an attention rank of 8 GPUs exceeds 4.
  CHECK(error_of({"parallel.attention_tp=8", "disaggregation.prefill_ep_size=4", "disaggregation.prefill_groups=2"}) ==
        "--set: disaggregation.prefill_ep_size: must be a multiple of parallel.attention_tp = 8, got 4");
  // A prefill EP size with no prefill pool does nothing, and says so.
  const auto colocated = pools_config({"disaggregation.prefill_groups=0"});
  REQUIRE(colocated.warnings.size() == 1);
  CHECK(colocated.warnings[0] ==
        "pools.toml: disaggregation.prefill_ep_size = 16 sizes the prefill pool, but prefill_groups = 0 (co-located): "
        "it has no effect");
  REQUIRE(colocated.pools.size() == 1);
  CHECK(colocated.pools[0].role == serving::PoolRole::colocated);
  CHECK(colocated.pools[0].shape.ep_size == 8);
}

TEST_CASE("pools: a prefill EP size equal to ep_size changes nothing") {
  // tests/data/small.toml disaggregated at EP2: group 0 (node 0) prefills, group 1 (node 1) decodes.
  const std::string path = std::string(EPSIM_TEST_DATA_DIR) + "/small.toml";
  const std::vector<std::string> base{"parallel.ep_size=2", "disaggregation.prefill_groups=1",
                                      "output.gpu_layers_csv=true"};
  const auto run = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> sets = base;
    sets.insert(sets.end(), extra.begin(), extra.end());
    const auto cfg = experiments::load_config(path, sets);
    serving::SimulationParts parts = experiments::build_simulation(cfg, experiments::profile_pool_windows(cfg));
    REQUIRE(parts.pools.size() == 2);
    CHECK(parts.pools[0].spec.shape.ep_size == 2);
    serving::Simulator sim(std::move(parts));
    const experiments::RunOutputs outputs(sim, cfg);
    const serving::SimulationResult res = sim.run();
    auto summary = nlohmann::json::parse(experiments::summary_json(cfg, res));
    summary.erase("config");  // the echo of the file and --set, which differ by the key
    return std::vector<std::string>{summary.dump(), experiments::requests_csv(res), outputs.logs().gpu_layers->csv(),
                                    experiments::human_summary(cfg, res)};
  };
  const std::vector<std::string> without = run({});
  CHECK(without == run({"disaggregation.prefill_ep_size=2"}));
  CHECK(without == run({"disaggregation.prefill_ep_size=0"}));
  CHECK(without[0].find("prefill_ep_size") == std::string::npos);
}
