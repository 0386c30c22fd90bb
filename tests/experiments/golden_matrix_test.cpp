// SPDX-License-Identifier: Apache-2.0
// The golden matrix: one small scenario per placement, routing, trigger and serving mode, whose
// summary.json metrics and resolved section are checked in under tests/data/golden/<name>.json and must
// match within a relative 1e-9 (refactors keep them byte for byte; a deliberate model change refreshes
// them with EPSIM_UPDATE_GOLDEN=1, and its commit says why). Each scenario runs in seconds.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/atomic_file.hpp"
#include "experiments/assembly/build_simulation.hpp"
#include "experiments/assembly/experiment_config.hpp"
#include "experiments/assembly/results_writer.hpp"
#include "experiments/cli/cli.hpp"
#include "experiments/cli/trace_commands.hpp"

using namespace epsim;

namespace {

const std::string k_data = EPSIM_TEST_DATA_DIR;

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Compares every number of `expected` with `actual` (relative 1e-9), recursing into objects and arrays;
// `actual` must hold exactly the keys of `expected`, so a metric cannot disappear or appear unnoticed.
void compare(const nlohmann::json& expected, const nlohmann::json& actual, const std::string& path) {
  INFO(path);
  REQUIRE(actual.type_name() == std::string(expected.type_name()));
  if (expected.is_object()) {
    REQUIRE(actual.size() == expected.size());
    for (auto it = expected.begin(); it != expected.end(); ++it) {
      INFO("key " << it.key());
      REQUIRE(actual.contains(it.key()));
      compare(it.value(), actual[it.key()], path + "." + it.key());
    }
  } else if (expected.is_array()) {
    REQUIRE(actual.size() == expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      compare(expected[i], actual[i], path + "[" + std::to_string(i) + "]");
    }
  } else if (expected.is_number()) {
    REQUIRE(actual.get<double>() == Approx(expected.get<double>()).epsilon(1e-9).margin(1e-12));
  } else {
    REQUIRE(actual == expected);
  }
}

// A routing trace of tests/data/small.toml's model, made by `epsim trace gen` (removed by the caller).
std::string make_small_trace() {
  const auto p = std::filesystem::temp_directory_path() /
                 ("epsim-golden-" + std::to_string(static_cast<long long>(::getpid())) + ".trace");
  std::ostringstream out;
  experiments::trace_command({"gen", k_data + "/small.toml", "--out", p.string(), "--steps", "400", "--tokens", "512"},
                             out);
  return p.string();
}

void check_golden(const std::string& name, const std::string& config, std::vector<std::string> sets) {
  const auto cfg = experiments::load_config(k_data + "/" + config, sets);
  serving::Simulator sim(experiments::build_simulation(cfg, experiments::profile_pool_windows(cfg)));
  const auto res = sim.run();
  const auto summary = nlohmann::json::parse(experiments::summary_json(cfg, res));
  nlohmann::ordered_json pinned;
  pinned["metrics"] = summary["metrics"];
  pinned["resolved"] = summary["resolved"];
  const std::filesystem::path path = k_data + "/golden/" + name + ".json";
  if (const char* update = std::getenv("EPSIM_UPDATE_GOLDEN"); update != nullptr && std::string(update) == "1") {
    core::write_file_atomically(path, pinned.dump(2) + "\n");
    WARN("golden " << name << " rewritten");
    return;
  }
  REQUIRE(std::filesystem::exists(path));
  const auto expected = nlohmann::json::parse(read(path));
  compare(expected, nlohmann::json::parse(pinned.dump()), name);
}

}  // namespace

// Mixtral-8x7B EP4 on 2 x 2 H100, one GPU 10 % slow (tests/data/small.toml): the baselines and modes.
TEST_CASE("golden: linear placement, even routing", "[golden]") {
  check_golden("linear", "small.toml", {});
}

TEST_CASE("golden: eplb with redundant experts", "[golden]") {
  check_golden("eplb", "small.toml", {"policy.placement=eplb", "parallel.redundant_experts=4"});
}

TEST_CASE("golden: eplb + periodic rebalancing", "[golden]") {
  check_golden("eplb_periodic", "small.toml",
               {"policy.placement=eplb", "parallel.redundant_experts=4", "policy.rebalance.trigger=periodic",
                "policy.rebalance.window_steps=16", "policy.rebalance.interval_steps=64"});
}

TEST_CASE("golden: metro greedy", "[golden]") {
  check_golden("metro_greedy", "small.toml",
               {"policy.placement=eplb", "parallel.redundant_experts=4", "policy.routing=metro"});
}

TEST_CASE("golden: metro exact", "[golden]") {
  check_golden("metro_exact", "small.toml",
               {"policy.placement=eplb", "parallel.redundant_experts=4", "policy.routing=metro",
                "policy.routing_options.mode=exact"});
}

TEST_CASE("golden: disaggregated prefill / decode", "[golden]") {
  check_golden("disaggregated", "small.toml", {"parallel.ep_size=2", "disaggregation.prefill_groups=1"});
}

TEST_CASE("golden: three pools (prefill on H200, decode on H100 and B200)", "[golden]") {
  check_golden("three_pools", "three_pools.toml", {});
}

TEST_CASE("golden: unequal pools (prefill EP4, decode EP2)", "[golden]") {
  check_golden("unequal_pools", "three_pools.toml",
               {"pool=[{name=\"pf\", role=\"prefill\", gpus=4, ep_size=4}, {name=\"dc\", role=\"decode\", gpus=2}]",
                "parallel.redundant_experts=0"});
}

TEST_CASE("golden: DeepEP normal kernels with two-batch overlap", "[golden]") {
  check_golden("deepep_two_batch", "small.toml",
               {"communication.algorithm=deepep_normal", "communication.overlap=two_batch"});
}

TEST_CASE("golden: a measured table as the cost model", "[golden]") {
  check_golden("measured_table", "small.toml",
               {"calibration.table=\"" + k_data + "/../../data/profiles/public-h100.csv\""});
}

TEST_CASE("golden: tensor-parallel attention", "[golden]") {
  check_golden("tp_attention", "small.toml", {"parallel.attention_tp=2"});
}

TEST_CASE("golden: trace replay", "[golden]") {
  const std::string trace = make_small_trace();
  check_golden("trace_replay", "small.toml", {"routing.source=trace", "routing.trace_file=\"" + trace + "\""});
  std::filesystem::remove(trace);
}

// The vectorised Poisson kernels (small.toml's prefills draw their counts by Poissonisation). CTest runs
// this case once per instruction set as well (experiments_tests:golden_poisson_on_<set>, EPSIM_ISA): one
// golden for every path.
TEST_CASE("golden: poisson sampling", "[golden]") {
  check_golden("poisson_sampling", "small.toml", {"routing.sampling=\"poisson\""});
}

TEST_CASE("golden: port-model collectives", "[golden]") {
  check_golden("ports", "small.toml", {"cluster.collective_model=ports"});
}

TEST_CASE("golden: graph collectives", "[golden]") {
  check_golden("graph", "small.toml", {"cluster.collective_model=graph"});
}

// OLMoE EP4 on 4 H200, one GPU 12 % slow, prefill-heavy (tests/data/gem_scenario.toml).
TEST_CASE("golden: gem", "[golden][slow]") {
  check_golden("gem", "gem_scenario.toml", {"policy.placement=gem", "workload.num_requests=40"});
}

TEST_CASE("golden: vibe", "[golden]") {
  check_golden("vibe", "gem_scenario.toml", {"policy.placement=vibe", "workload.num_requests=40"});
}

TEST_CASE("golden: vibe + drift recalibration", "[golden]") {
  check_golden("vibe_drift", "gem_scenario.toml",
               {"policy.placement=vibe", "policy.rebalance=drift", "routing.topics=2", "routing.topic_spread=1.0",
                "routing.topic_mix=[1.0, 0.0]", "routing.drift_target_mix=[0.0, 1.0]", "routing.drift=\"shift\"",
                "routing.drift_start_s=3.0", "routing.drift_duration_s=1.0"});
}

// OLMoE EP8 on 2 x 4 H100 with 8 redundant slots and 4 request topics (tests/data/grace_scenario.toml).
TEST_CASE("golden: grace placement + routing", "[golden]") {
  check_golden("grace", "grace_scenario.toml",
               {"policy.placement=grace", "policy.routing=grace", "workload.num_requests=50"});
}

// DeepSeek-V2-Lite EP4 on 4 RTX 4090, batches of 16 with static batching (tests/data/director_scenario.toml).
TEST_CASE("golden: director static", "[golden]") {
  check_golden("director_static", "director_scenario.toml", {"policy.placement=director", "workload.num_requests=48"});
}

TEST_CASE("golden: director online (batch scenario)", "[golden]") {
  check_golden(
      "director_online", "director_scenario.toml",
      {"policy.rebalance.trigger=director", "policy.rebalance.when=arrivals", "policy.rebalance.predict=queued",
       "policy.rebalance.horizon_steps=64", "policy.rebalance.predictor=oracle", "workload.num_requests=48"});
}

// The README shows what `bash scripts/demo.sh` prints; it must be what the binary prints today (all
// but the last line, whose wall time varies).
TEST_CASE("README: the demo output shown is what epsim run prints", "[golden][readme][slow]") {
  const std::string readme = read(std::filesystem::path(k_data) / ".." / ".." / "README.md");
  const std::string open = "it finishes in a few seconds and prints:\n\n```\n";
  const auto begin = readme.find(open);
  REQUIRE(begin != std::string::npos);
  const auto end = readme.find("```", begin + open.size());
  REQUIRE(end != std::string::npos);
  const std::string shown = readme.substr(begin + open.size(), end - begin - open.size());

  const auto dir =
      std::filesystem::temp_directory_path() / ("epsim-readme-" + std::to_string(static_cast<long long>(::getpid())));
  std::ostringstream out;
  std::ostringstream err;
  REQUIRE(experiments::run_cli({"run", "--out", dir.string()}, out, err) == 0);
  std::filesystem::remove_all(dir);
  std::string printed = out.str();
  const auto wall = printed.rfind("wall time ");
  REQUIRE(wall != std::string::npos);
  printed.resize(wall);
  REQUIRE(printed == shown);
}
