// SPDX-License-Identifier: Apache-2.0
// Disaggregated prefill/decode: the KV transfer between the pools takes the time computed by hand.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>
#include "tests/support/csv.hpp"

#include "experiments/assembly/build_simulation.hpp"
#include "experiments/assembly/experiment_config.hpp"
#include "sim/run_logs.hpp"

using namespace epsim;

TEST_CASE("disaggregated serving adds the KV transfer time between prefill and decode") {
  // tests/data/small.toml: Mixtral-8x7B on 2 HGX-H100 nodes of 2 GPUs. EP2: group 0 (node 0) prefills,
  // group 1 (node 1) decodes. One request: 512-token prompt, 2 output tokens.
  const auto cfg =
      experiments::load_config(std::string(EPSIM_TEST_DATA_DIR) + "/small.toml",
                               {"parallel.ep_size=2", "disaggregation.prefill_groups=1", "workload.num_requests=1",
                                "workload.prompt_tokens.distribution=\"fixed\"", "workload.prompt_tokens.value=512",
                                "workload.output_tokens.distribution=\"fixed\"", "workload.output_tokens.value=2"});
  serving::Simulator sim(experiments::build_simulation(cfg, experiments::profile_pool_windows(cfg)));
  serving::StepLog log;
  sim.add_observer(&log);
  const auto res = sim.run();
  REQUIRE(res.kv_transfers == 1);
  const auto& r = res.requests[0];
  REQUIRE(r.finished());
  REQUIRE(r.group == 1);
  // KV of 512 tokens: 32 layers x K and V of 8 heads x 128 dims in BF16 = 131072 bytes per token.
  const double bytes = 512.0 * 32 * 2 * 8 * 128 * 2;
  REQUIRE(res.kv_transfer_bytes == bytes);
  // GPU 0 -> NIC -> rail-0 leaf -> NIC -> GPU 2: 4 hops of 1 us (PCIe 5, NDR), bottleneck the NIC link
  // at the 47 GB/s NDR achieves (50 x 0.94); the transfer ends on the first whole nanosecond after its last byte.
  const core::Time transfer = 4000 + static_cast<core::Time>(std::ceil(bytes / (50.0 * 0.94)));
  REQUIRE(res.kv_transfer_ms_mean * 1e6 == Approx(static_cast<double>(transfer)));
  // The second token comes one decode step after the transfer: find that step (group 1) in the log.
  std::istringstream csv(log.csv());
  std::string line;
  std::getline(csv, line);
  core::Time decode_step = -1;
  while (std::getline(csv, line)) {
    if (line.rfind("1,", 0) == 0) {
      const std::vector<std::string> f = test::csv_cells(line);
      decode_step = std::stoll(f[4]);
      REQUIRE(std::stoll(f[2]) == r.first_token_ns + transfer);  // it starts when the KV cache has arrived
    }
  }
  REQUIRE(decode_step > 0);
  REQUIRE(r.finish_ns - r.first_token_ns == transfer + decode_step);
}

namespace {

// A burst of `n` requests arriving together on 4 nodes x 2 H100: EP2, group 0 prefills them all in one
// step (64-token prompts), groups 1-3 decode (6 DP ranks). Returns the requests each decode rank got.
std::vector<int> decode_ranks_after_burst(int n, const std::string& handoff, serving::SimulationResult* out = nullptr) {
  const auto cfg = experiments::load_config(
      std::string(EPSIM_TEST_DATA_DIR) + "/small.toml",
      {"cluster.nodes=4", "cluster.speed_factors=[]", "parallel.ep_size=2", "disaggregation.prefill_groups=1",
       "disaggregation.handoff=\"" + handoff + "\"", "workload.arrival=\"batches\"",
       "workload.batch_size=" + std::to_string(n), "workload.num_requests=" + std::to_string(n),
       "workload.prompt_tokens.distribution=\"fixed\"", "workload.prompt_tokens.value=64",
       "workload.output_tokens.distribution=\"fixed\"", "workload.output_tokens.value=40"});
  serving::Simulator sim(experiments::build_simulation(cfg, experiments::profile_pool_windows(cfg)));
  auto res = sim.run();
  std::vector<int> per_rank(6, 0);
  for (const auto& r : res.requests) {
    REQUIRE(r.finished());
    REQUIRE(r.first_token_ns == res.requests[0].first_token_ns);  // one prefill step: one burst of hand-offs
    REQUIRE(r.group >= 1);
    ++per_rank[static_cast<std::size_t>((r.group - 1) * 2 + r.rank)];
  }
  if (out != nullptr) {
    *out = std::move(res);
  }
  return per_rank;
}

}  // namespace

TEST_CASE("a burst of hand-offs spreads over the decode ranks within one request of even") {
  // Before hand-offs counted the transfers in flight, a burst went to rank 0 of each decode group.
  for (const std::string policy : {"least_loaded", "round_robin", "kv_aware"}) {
    for (const int n : {6, 12, 13, 17}) {
      INFO(policy << ", " << n << " requests");
      const std::vector<int> per_rank = decode_ranks_after_burst(n, policy);
      const auto [lo, hi] = std::minmax_element(per_rank.begin(), per_rank.end());
      REQUIRE(*hi - *lo <= 1);
      REQUIRE(*lo == n / 6);
    }
  }
}

TEST_CASE("the summary's requests per rank count each pool's ranks") {
  serving::SimulationResult res;
  const std::vector<int> per_rank = decode_ranks_after_burst(13, "least_loaded", &res);
  REQUIRE(res.pools.size() == 2);
  REQUIRE(res.pools[0].name == "prefill");
  // Arrivals: one prefill group of 2 ranks, least loaded first: 7 and 6.
  REQUIRE(res.pools[0].per_rank == std::vector<std::int64_t>{7, 6});
  REQUIRE(res.pools[1].name == "decode");
  // Decode: groups 1-3, 2 ranks each, group by group, as the requests record them.
  REQUIRE(res.pools[1].per_rank == std::vector<std::int64_t>(per_rank.begin(), per_rank.end()));
}

TEST_CASE("an unknown hand-off policy is refused naming the valid ones") {
  REQUIRE_THROWS_WITH(
      experiments::load_config(
          std::string(EPSIM_TEST_DATA_DIR) + "/small.toml",
          {"parallel.ep_size=2", "disaggregation.prefill_groups=1", "disaggregation.handoff=\"random\""}),
      Catch::Contains("disaggregation.handoff") && Catch::Contains("least_loaded, round_robin, kv_aware"));
}
