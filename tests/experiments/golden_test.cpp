// SPDX-License-Identifier: Apache-2.0
// tests/data/small.toml end to end: byte-identical reruns with the same seed, per-request metrics that
// recompute from requests.csv, graph vs port collectives, tokens.csv. (Its pinned summary is the golden
// matrix's "linear" scenario, golden_matrix_test.cpp.)
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include "tests/support/csv.hpp"

#include "experiments/assembly/build_simulation.hpp"
#include "experiments/assembly/experiment_config.hpp"
#include "experiments/assembly/results_writer.hpp"
#include "sim/run_logs.hpp"

#include <map>

using namespace epsim;

namespace {

struct Outputs {
  std::string summary;
  std::string requests;
};

Outputs run_small(const std::vector<std::string>& sets = {}) {
  const auto cfg = experiments::load_config(std::string(EPSIM_TEST_DATA_DIR) + "/small.toml", sets);
  serving::Simulator sim(experiments::build_simulation(cfg, experiments::profile_pool_windows(cfg)));
  const auto res = sim.run();
  return {experiments::summary_json(cfg, res), experiments::requests_csv(res)};
}

}  // namespace

TEST_CASE("determinism: the same config and seed give byte-identical outputs") {
  const auto a = run_small();
  const auto b = run_small();
  REQUIRE(a.summary == b.summary);
  REQUIRE(a.requests == b.requests);
  const auto c = run_small({"run.seed=8"});
  REQUIRE(c.requests != a.requests);
  // Communication as deployed draws its own samples (the fan-out's tokens), from their own stream: still
  // byte-identical, and the workload's draws are untouched (the same requests arrive).
  for (const char* algorithm : {"deepep_normal", "deepep_auto"}) {
    const std::vector<std::string> deployed{std::string("communication.algorithm=\"") + algorithm + "\"",
                                            "communication.overlap=\"two_batch\""};
    const auto d = run_small(deployed);
    const auto e = run_small(deployed);
    REQUIRE(d.summary == e.summary);
    REQUIRE(d.requests == e.requests);
    REQUIRE(d.requests != a.requests);  // it changes the timing
  }
}

TEST_CASE("per-request metrics recomputed from requests.csv match the summary") {
  const auto out = run_small();
  std::istringstream csv(out.requests);
  std::string line;
  std::getline(csv, line);  // header
  std::vector<double> ttft;
  int rows = 0;
  while (std::getline(csv, line)) {
    const std::vector<std::string> f = test::csv_cells(line);
    ++rows;
    const double arrival = std::stod(f[5]);
    const double first = std::stod(f[6]);
    ttft.push_back((first - arrival) / 1e6);
  }
  const auto j = nlohmann::json::parse(out.summary);
  REQUIRE(rows == j["metrics"]["requests"].get<int>());
  double mean = 0;
  for (double x : ttft) {
    mean += x;
  }
  mean /= static_cast<double>(ttft.size());
  REQUIRE(j["metrics"]["ttft_ms"]["mean"].get<double>() == Approx(mean).epsilon(1e-9));
  std::sort(ttft.begin(), ttft.end());
  const double pos = 0.9 * static_cast<double>(ttft.size() - 1);
  const auto lo = static_cast<std::size_t>(pos);
  const double p90 = ttft[lo] + (ttft[lo + 1] - ttft[lo]) * (pos - static_cast<double>(lo));
  REQUIRE(j["metrics"]["ttft_ms"]["p90"].get<double>() == Approx(p90).epsilon(1e-9));
}

TEST_CASE("graph and port collective models: close on switch + rail fabrics and on a mesh") {
  const auto run = [](const std::vector<std::string>& sets) {
    const auto cfg = experiments::load_config(std::string(EPSIM_TEST_DATA_DIR) + "/small.toml", sets);
    serving::Simulator sim(experiments::build_simulation(cfg, experiments::profile_pool_windows(cfg)));
    return sim.run().summary;
  };
  // HGX: the port model's bandwidth term is exact for the engine's dispatch traffic
  // (tests/hardware/network_test.cpp); only its alpha is the worst-case route's, so the runs stay close.
  const auto graph = run({"cluster.collective_model=graph"});
  const auto ports = run({"cluster.collective_model=ports"});
  REQUIRE(graph.mean_step_ms == Approx(ports.mean_step_ms).epsilon(0.01));
  REQUIRE(graph.comm_fraction == Approx(ports.comm_fraction).epsilon(0.05));
  REQUIRE(graph.comm_fraction <= ports.comm_fraction);
  // One MI300X node: a link per GPU pair, which the port model cannot see.
  const std::vector<std::string> mesh{"cluster.preset=mi300x-8", "cluster.nodes=1", "cluster.gpus_per_node=4",
                                      "cluster.scale_out=none", "gpu.preset=mi300x"};
  auto g = mesh;
  g.emplace_back("cluster.collective_model=graph");
  auto p = mesh;
  p.emplace_back("cluster.collective_model=ports");
  // The ports model sees a GPU's port as its links to its 3 peers together (3 x 64 GB/s): the runs stay
  // close, and the graph's exchange is never the faster (a pair link cannot lend its capacity to
  // another pair's traffic, which the port model's sum does under skew).
  const auto on_graph = run(g);
  const auto on_ports = run(p);
  REQUIRE(on_graph.mean_step_ms == Approx(on_ports.mean_step_ms).epsilon(0.02));
  REQUIRE(on_graph.comm_fraction >= on_ports.comm_fraction);
  REQUIRE(on_graph.comm_fraction < 1.25 * on_ports.comm_fraction);
}

TEST_CASE("tokens.csv lists every token and its gaps give each request's TPOT") {
  const auto cfg = experiments::load_config(std::string(EPSIM_TEST_DATA_DIR) + "/small.toml", {});
  serving::Simulator sim(experiments::build_simulation(cfg, experiments::profile_pool_windows(cfg)));
  serving::TokenLog tokens;
  sim.add_observer(&tokens);
  const auto res = sim.run();
  std::map<std::int64_t, std::vector<std::int64_t>> times;
  std::istringstream csv(tokens.csv());
  std::string line;
  std::getline(csv, line);
  while (std::getline(csv, line)) {
    std::int64_t id = 0;
    std::int64_t index = 0;
    std::int64_t t = 0;
    char comma = 0;
    std::istringstream ls(line);
    ls >> id >> comma >> index >> comma >> t;
    REQUIRE(index == static_cast<std::int64_t>(times[id].size()) + 1);
    times[id].push_back(t);
  }
  REQUIRE(times.size() == res.requests.size());
  for (const auto& r : res.requests) {
    const auto& ts = times[r.spec.id];
    REQUIRE(static_cast<std::int64_t>(ts.size()) == r.spec.output_tokens);
    REQUIRE(ts.front() == r.first_token_ns);
    REQUIRE(ts.back() == r.finish_ns);
    if (ts.size() > 1) {
      REQUIRE(r.tpot_ms() == Approx(core::to_ms(ts.back() - ts.front()) / static_cast<double>(ts.size() - 1)));
    }
  }
}
