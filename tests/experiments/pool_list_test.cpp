// SPDX-License-Identifier: Apache-2.0
// Deployments as lists of pools ([[pool]]): the shorthand and its [[pool]] spelling run identically; a
// three-pool deployment (a prefill pool handing off to two decode pools of other GPUs) runs from a
// config; each pool's GPUs, communication and policy are its own; bad lists are refused by name.
#include <catch2/catch.hpp>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "experiments/assembly/build_simulation.hpp"
#include "experiments/assembly/builders.hpp"
#include "experiments/assembly/experiment_config.hpp"
#include "experiments/assembly/results_writer.hpp"
#include "hardware/roofline.hpp"

using namespace epsim;

namespace {

// Mixtral-8x7B (8 experts) on 3 HGX nodes of 2 GPUs, every pool EP2; the pools follow.
constexpr const char* k_base = R"(
[run]
seed = 3
[model]
preset = "mixtral-8x7b"
[cluster]
preset = "hgx-h100"
nodes = 3
gpus_per_node = 2
[workload]
rate_rps = 20.0
num_requests = 60
[workload.prompt_tokens]
distribution = "uniform"
min = 64
max = 512
[workload.output_tokens]
distribution = "fixed"
value = 12
[scheduler]
max_batch_tokens = 2048
)";

// A prefill pool on H200s and two decode pools, one of H100s (the cluster's) and one of B200s.
constexpr const char* k_three = R"(
[[pool]]
name = "pf"
role = "prefill"
gpus = 2
gpu = "h200"
[pool.communication]
algorithm = "deepep_normal"
[[pool]]
name = "dc-h100"
role = "decode"
gpus = 2
[[pool]]
name = "dc-b200"
role = "decode"
gpus = 2
gpu = "b200"
[pool.policy]
placement = "eplb"
load_window = "synthetic"
)";

experiments::ExperimentConfig config(const std::string& pools, const std::vector<std::string>& sets = {}) {
  return experiments::load_config_text(std::string(k_base) + pools, "pools.toml", sets);
}

std::string error_of(const std::string& pools, const std::vector<std::string>& sets = {}) {
  try {
    config(pools, sets);
  } catch (const core::ConfigError& e) {
    return e.what();
  }
  FAIL("expected a ConfigError");
  return "";
}

// Everything a run writes that depends on the deployment, less the config echo.
std::vector<std::string> outputs(const experiments::ExperimentConfig& cfg) {
  serving::Simulator sim(experiments::build_simulation(cfg, experiments::profile_pool_windows(cfg)));
  const serving::SimulationResult res = sim.run();
  auto summary = nlohmann::json::parse(experiments::summary_json(cfg, res));
  return {summary["metrics"].dump(), experiments::requests_csv(res)};
}

}  // namespace

TEST_CASE("pool lists: the shorthand and its pool list run identically") {
  // [disaggregation] with one prefill group of EP2 on 6 GPUs = a prefill pool of 2 GPUs and a decode
  // pool of 4 in groups of 2, handing off to it.
  const auto shorthand = config("[parallel]\nep_size = 2\n[disaggregation]\nprefill_groups = 1\n");
  const auto list = config(R"(
[[pool]]
role = "prefill"
gpus = 2
[[pool]]
role = "decode"
gpus = 4
ep_size = 2
)");
  REQUIRE(list.pools.size() == 2);
  CHECK(list.pools[0].name == "prefill");  // a name defaults to the role
  CHECK(list.pools[1].shape.groups == 2);
  CHECK(list.pools[0].handoff_to == std::vector<int>{1});
  CHECK(outputs(shorthand) == outputs(list));
  // A colocated pool of every GPU is the plain co-located run.
  CHECK(outputs(config("[parallel]\nep_size = 2\n")) ==
        outputs(config("[[pool]]\nrole = \"colocated\"\ngpus = 6\nep_size = 2\n")));
}

TEST_CASE("pool lists: a prefill pool hands off to two decode pools of other GPUs") {
  const auto cfg = config(k_three);
  REQUIRE(cfg.pools.size() == 3);
  CHECK(cfg.pools[0].handoff_to == std::vector<int>{1, 2});  // every decode pool by default
  CHECK(cfg.pools[0].comm.algorithm == hardware::DispatchAlgorithm::deepep_normal);
  CHECK(cfg.pools[1].comm.algorithm == hardware::DispatchAlgorithm::nccl);
  CHECK(cfg.pools[1].policy.placement == "linear");
  CHECK(cfg.pools[2].policy.placement == "eplb");
  CHECK(&cfg.primary_pool() == &cfg.pools[1]);
  // Each GPU is priced as its pool's model: GPUs 0-1 H200, 2-3 the cluster's H100, 4-5 B200.
  const auto cost = experiments::make_cost_model(cfg);
  const hardware::RooflineCostModel& roofline = hardware::roofline_of(*cost);
  const std::vector<std::string> names{"NVIDIA H200 SXM 141GB", "NVIDIA H200 SXM 141GB", "NVIDIA H100 SXM 80GB",
                                       "NVIDIA H100 SXM 80GB",  "NVIDIA B200 180GB",     "NVIDIA B200 180GB"};
  for (int g = 0; g < 6; ++g) {
    CHECK(roofline.gpu_of(g).name == names[static_cast<std::size_t>(g)]);
  }
  serving::Simulator sim(experiments::build_simulation(cfg, experiments::profile_pool_windows(cfg)));
  const serving::SimulationResult res = sim.run();
  REQUIRE(res.requests.size() == 60);
  std::map<int, int> finished_in;  // group -> requests decoded there
  for (const serving::RequestState& r : res.requests) {
    REQUIRE(r.finished());
    ++finished_in[r.group];
  }
  CHECK(finished_in.count(0) == 0);  // the prefill pool decodes nothing
  CHECK(finished_in[1] + finished_in[2] == 60);
  CHECK(finished_in[1] > 0);
  CHECK(finished_in[2] > 0);
  CHECK(res.kv_transfers == 60);
  REQUIRE(res.pools.size() == 3);
  CHECK(res.pools[0].name == "pf");
  CHECK(res.pools[1].per_rank.size() == 2);
  CHECK(res.pools[1].per_rank[0] + res.pools[1].per_rank[1] + res.pools[2].per_rank[0] + res.pools[2].per_rank[1] ==
        60);
  const auto j = nlohmann::json::parse(experiments::summary_json(cfg, res));
  REQUIRE(j["resolved"]["pools"].size() == 3);
  CHECK(j["resolved"]["pools"][2]["gpu"] == "NVIDIA B200 180GB");
  CHECK(j["resolved"]["pools"][0]["handoff_to"] == nlohmann::json::array({"dc-h100", "dc-b200"}));
  CHECK(j["resolved"]["pools"][0]["communication"] == "deepep_normal");
  CHECK(j["metrics"]["pools"]["dc-b200"]["requests_per_rank"]["mean"] == Approx(finished_in[2] / 2.0));
  CHECK(serving::describe_pools(cfg.pools) == "EP2");  // one EP size throughout
}

TEST_CASE("pool lists: pools of different EP sizes describe themselves") {
  const auto cfg = config(R"(
[[pool]]
name = "pf"
role = "prefill"
gpus = 4
ep_size = 4
[[pool]]
name = "dc"
role = "decode"
gpus = 2
)");
  CHECK(cfg.ep_size() == 2);
  CHECK(serving::describe_pools(cfg.pools) == "pf 1 x EP4, dc 1 x EP2");
}

TEST_CASE("pool lists: bad pool lists are refused naming the pool and what was expected") {
  CHECK(error_of("[[pool]]\nrole = \"colocated\"\ngpus = 4\n") ==
        "pools.toml: pool: the pools' GPUs add up to 4, but the cluster has 6");
  CHECK(error_of("[[pool]]\nrole = \"prefill\"\ngpus = 6\nep_size = 2\n") ==
        "pools.toml: pool[0].role: a prefill pool needs a decode pool to hand off to, and there is none");
  CHECK(error_of("[[pool]]\nrole = \"colocated\"\ngpus = 2\n[[pool]]\nrole = \"decode\"\ngpus = 4\n") ==
        "pools.toml: pool[1].role: decode pool \"decode\" gets no requests: no prefill pool hands off to it");
  CHECK(error_of("[[pool]]\nrole = \"colocated\"\ngpus = 2\n[[pool]]\nrole = \"colocated\"\ngpus = 4\n") ==
        "pools.toml: pool: two pools are named \"colocated\" (pool[0] and pool[1])");
  CHECK(error_of("[[pool]]\nrole = \"prefill\"\ngpus = 2\nhandoff_to = [\"pf\"]\n[[pool]]\nname = \"pf\"\nrole = "
                 "\"colocated\"\ngpus = 4\n") ==
        "pools.toml: pool[0].handoff_to: \"pf\" is not the name of a decode pool");
  // handoff_to names the decode pools a prefill pool feeds: one left unfed is an error.
  std::string one_target = k_three;
  one_target.insert(one_target.find("[pool.communication]"), "handoff_to = [\"dc-b200\"]\n");
  CHECK(error_of(one_target) ==
        "pools.toml: pool[1].role: decode pool \"dc-h100\" gets no requests: no prefill pool hands off to it");
  CHECK(error_of("[[pool]]\nrole = \"colocated\"\ngpus = 6\nep_size = 4\n") ==
        "pools.toml: pool[0].ep_size: must divide the pool's 6 GPUs, got 4");
  CHECK(error_of("[[pool]]\nrole = \"colocated\"\ngpus = 6\nep_size = 2\nhandoff = \"round_robin\"\n") ==
        "pools.toml: pool[0].handoff: only a prefill pool hands requests off");
  CHECK(error_of("[[pool]]\nname = \"a b\"\nrole = \"colocated\"\ngpus = 6\n") ==
        "pools.toml: pool[0].name: expected 1-64 letters, digits, '_' or '-', got \"a b\"");
  // [parallel] gives the pools' defaults: an ep_size of 4 does not divide a pool of 6.
  CHECK(error_of("[[pool]]\nrole = \"colocated\"\ngpus = 6\n[parallel]\nep_size = 4\n") ==
        "pools.toml: pool[0].ep_size: must divide the pool's 6 GPUs, got 4");
  CHECK(error_of("[[pool]]\nrole = \"colocated\"\ngpus = 6\n[disaggregation]\nprefill_groups = 1\n")
            .find("pools.toml: disaggregation: [disaggregation] is the shorthand") == 0);
  CHECK(error_of("", {"pool=3"}).find("--set: pool: expected an array of tables") == 0);
  CHECK(error_of("[[pool]]\nrole = \"colocated\"\ngpus = 6\ncolour = 1\n")
            .find("pools.toml: pool[0].colour: unknown "
                  "key") == 0);
}

TEST_CASE("pool lists: a pool's load window comes from the explicit profiling step, never from build_simulation") {
  // dc-b200 places with EPLB on a synthetic load window; the other pools need none.
  const auto cfg = config(k_three);
  REQUIRE_THROWS_WITH(experiments::build_simulation(cfg, experiments::PoolWindows{}),
                      Catch::Contains("pool \"dc-b200\"") && Catch::Contains("profile_pool_windows"));
  const experiments::PoolWindows windows = experiments::profile_pool_windows(cfg);
  REQUIRE(windows.of_pool.size() == 3);
  CHECK_FALSE(windows.of_pool[0].has_value());
  CHECK_FALSE(windows.of_pool[1].has_value());
  REQUIRE(windows.of_pool[2].has_value());
  CHECK(windows.of_pool[2]->total.size() == 32U * 8U);  // Mixtral-8x7B: 32 MoE layers x 8 experts
  CHECK(experiments::build_simulation(cfg, windows).pools.size() == 3);
}
