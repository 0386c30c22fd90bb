// SPDX-License-Identifier: Apache-2.0
// `epsim cost --collective`: single collectives priced by hand (network-graph send/recv inside and across
// nodes, all-reduce as NCCL picks it), a DeepEP low-latency point as tests/serving/ep_comm_test.cpp prices it,
// and the usage errors.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <algorithm>
#include <cmath>

#include "calibration/measurement_table.hpp"
#include "experiments/assembly/row_pricing.hpp"
#include "hardware/cluster_spec.hpp"
#include "hardware/deepep_collectives.hpp"
#include "hardware/network_graph.hpp"
#include "sim/simulator.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/csv.hpp"

using namespace epsim;
using Catch::Contains;

namespace {

// The CSV rows (header dropped) of a successful `epsim cost --collective ... --csv`.
std::vector<std::vector<std::string>> csv_rows(std::vector<std::string> args) {
  args.insert(args.begin(), "cost");
  args.push_back("--csv");
  const test::Cli r = test::cli(args);
  INFO(r.err);
  REQUIRE(r.code == 0);
  std::istringstream in(r.out);
  std::string line;
  std::getline(in, line);
  REQUIRE(line == (args[2] == "dispatch" || args[2] == "combine" ? "tokens" : "bytes") +
                      std::string(",time_us,gbps,nvlink_bytes,network_bytes,via"));
  std::vector<std::vector<std::string>> rows;
  while (std::getline(in, line)) {
    rows.push_back(test::csv_cells(line));
  }
  return rows;
}

double cell(const std::vector<std::string>& row, std::size_t i) {
  return std::stod(row.at(i));
}

const double k_gib = 1024.0 * 1024.0 * 1024.0;

}  // namespace

TEST_CASE("send_recv inside a node: overhead + two NVLink hops + bytes over NVLink 4's achieved bandwidth") {
  // HGX H100: GPU 0 -> NVSwitch -> GPU 1, 0.5 us a hop, collective_overhead_us 5; 450 GB/s x 0.82 = 369.
  const auto rows = csv_rows({"--collective", "send_recv", "--cluster", "hgx-h100", "--peer", "1", "--bytes", "1M,1G"});
  REQUIRE(rows.size() == 2);
  for (const auto& [row, bytes] : {std::pair{rows[0], 1048576.0}, std::pair{rows[1], k_gib}}) {
    const double us = 5.0 + 1.0 + bytes / 369.0 / 1e3;
    CHECK(cell(row, 0) == bytes);
    CHECK(cell(row, 1) == Approx(us));
    CHECK(cell(row, 2) == Approx(bytes / (us * 1e3)));  // GB/s = bytes per ns
    CHECK(cell(row, 3) == bytes);                       // all over NVLink
    CHECK(cell(row, 4) == 0.0);
    CHECK(row.at(5) == "graph");
  }
  // 1 GiB: 2,909.87 us of transfer, 369 GB/s achieved less the 6 us startup.
  CHECK(cell(rows[1], 2) == Approx(368.24).epsilon(1e-4));
}

TEST_CASE("send_recv across nodes: the PCIe, NIC and leaf hops, bounded by NDR's achieved 47 GB/s") {
  // GPU 8 is node 1's GPU of the same rail: GPU -> NIC (PCIe 5, 1 us) -> rail leaf (NDR, 1 us) -> NIC (NDR,
  // 1 us) -> GPU (PCIe 5, 1 us): 4 us + 5 us overhead; 50 GB/s x 0.94 = 47 is the slowest arc.
  const auto same_rail =
      csv_rows({"--collective", "send_recv", "--cluster", "hgx-h100", "--peer", "8", "--bytes", "1G"});
  REQUIRE(same_rail.size() == 1);
  CHECK(cell(same_rail[0], 1) == Approx(9.0 + k_gib / 47.0 / 1e3));
  CHECK(cell(same_rail[0], 3) == 0.0);
  CHECK(cell(same_rail[0], 4) == k_gib);
  // GPU 9 is on another rail: routes never transit a GPU, so leaf 0 -> spine -> leaf 1 adds two 1 us hops;
  // the spine links carry 2 nodes x 47 GB/s, NDR still decides.
  const auto other_rail =
      csv_rows({"--collective", "send_recv", "--cluster", "hgx-h100", "--peer", "9", "--bytes", "1G"});
  CHECK(cell(other_rail[0], 1) == Approx(11.0 + k_gib / 47.0 / 1e3));
}

TEST_CASE("all_reduce on 8 H100: NCCL's ring LL for small sizes, NVLS for large, a ring on A100") {
  // The launch = the port view's intra latency: 1 us of path + 5 us overhead; then NCCL's tuning model
  // (NVIDIA/nccl src/graph/tuning.cc): ring LL = 6.6 + 14 x 0.6 us at min(141, 369 / 2) x 8 / 14 GB/s;
  // NVLS = 25 us at 274 GB/s. Ring LL up to about 1.1 MB, NVLS beyond.
  const auto h100 =
      csv_rows({"--collective", "all_reduce", "--cluster", "hgx-h100", "--gpus", "8", "--bytes", "1K,1M,2M,1G"});
  REQUIRE(h100.size() == 4);
  for (const auto& row : h100) {
    const double bytes = cell(row, 0);
    const bool nvls = bytes > 1.5e6;
    const double us = 6.0 + (nvls ? 25.0 + bytes / 274.0 / 1e3 : 15.0 + bytes / (141.0 * 8.0 / 14.0) / 1e3);
    CHECK(cell(row, 1) == Approx(us));
    CHECK(cell(row, 2) == Approx(bytes / (us * 1e3) * 1.75));  // busbw = algbw x 2 (n-1) / n
    // NVLS: each GPU's buffer into the switch once; the ring: 2 (n-1)/n of it from each GPU.
    CHECK(cell(row, 3) == Approx(nvls ? 8.0 * bytes : 14.0 * bytes));
    CHECK(row.at(5) == (nvls ? "nvls/Simple" : "ring/LL"));
  }
  CHECK(cell(h100[3], 2) == Approx(475.7).epsilon(1e-3));  // nccl-tests measure ~480 GB/s busbw
  // HGX A100 (NVLink 3: 300 GB/s x 0.82 = 246, no NVLS), 4 GPUs, 1 GiB: ring Simple, 8.4 + 6 x 3.4 us, at
  // 246 x 4 / 6 GB/s.
  const auto a100 = csv_rows({"--collective", "all_reduce", "--cluster", "hgx-a100", "--gpus", "4", "--bytes", "1G"});
  const double us = 6.0 + 28.8 + 1.5 * k_gib / 246.0 / 1e3;
  CHECK(cell(a100[0], 1) == Approx(us));
  CHECK(cell(a100[0], 2) == Approx(k_gib / (us * 1e3) * 1.5));
  CHECK(cell(a100[0], 3) == Approx(1.5 * k_gib * 4.0));
  CHECK(a100[0].at(5) == "ring/Simple");
}

TEST_CASE("a DeepEP low-latency dispatch and combine at EP16 are what the serving model charges") {
  // DeepEP's README point: H800, EP16, 128 tokens per GPU, top-8 of 256, hidden 7168 (FP8 7,392 B
  // dispatch, BF16 14,336 B combine). A GPU's 1,024 pairs: 512 to the other node over NDR (47 GB/s),
  // 448 to its 7 peers over H800 NVLink (160 GB/s), 960 messages x 15 ns, 20 us startup.
  const std::vector<std::string> point{
      "--cluster", "hgx-h800", "--ep", "16",        "--tokens", "128",         "--hidden",
      "7168",      "--top-k",  "8",    "--experts", "256",      "--algorithm", "deepep_low_latency"};
  std::vector<std::string> dispatch{"--collective", "dispatch"};
  dispatch.insert(dispatch.end(), point.begin(), point.end());
  const auto d = csv_rows(dispatch);
  REQUIRE(d.size() == 1);
  const double dispatch_us = 20.0 + 512.0 * 7392.0 / 47.0 / 1e3 + 960 * 0.015;
  CHECK(dispatch_us == Approx(114.93).epsilon(1e-4));  // published: 118 us
  CHECK(cell(d[0], 1) == Approx(dispatch_us));
  CHECK(cell(d[0], 3) == Approx(16 * 448 * 7392.0));
  CHECK(cell(d[0], 4) == Approx(16 * 512 * 7392.0));
  CHECK(cell(d[0], 2) == Approx(960 * 7392.0 / (dispatch_us * 1e3)));
  CHECK(d[0].at(5) == "deepep_low_latency");
  std::vector<std::string> combine{"--collective", "combine"};
  combine.insert(combine.end(), point.begin(), point.end());
  const auto c = csv_rows(combine);
  CHECK(cell(c[0], 1) == Approx(20.0 + 512.0 * 14336.0 / 47.0 / 1e3 + 960 * 0.015));  // published: 195 us

  // The same exchange built as tests/serving/ep_comm_test.cpp and the simulator build it.
  hardware::ClusterSpec two_nodes = hardware::load_cluster_preset("hgx-h800");
  two_nodes.nodes = 2;
  const hardware::Topology group = serving::group_topology(hardware::NetworkGraph(two_nodes).port_view(), 16);
  hardware::DeepEpLowLatency ll(group, hardware::algorithm_defaults(hardware::DispatchAlgorithm::deepep_low_latency));
  const Eigen::ArrayXd share = Eigen::ArrayXd::Constant(16, 1.0 / 16);
  const Eigen::ArrayXd pairs = Eigen::ArrayXd::Constant(16, 128.0 * 8);
  const double serving_ns =
      ll.ep_exchange(hardware::EpTraffic{&share, &pairs, nullptr, nullptr, nullptr}, 7392.0).time_ns;
  CHECK(cell(d[0], 1) == Approx(serving_ns / 1e3));
}

TEST_CASE("dispatch defaults come from the model, DeepEP normal deduplicates and is deterministic") {
  // DeepSeek-V3 on 2 HGX H800 nodes: hidden 7168, top-8 of 256, 8 groups, limit 4 from the preset.
  const std::vector<std::string> args{"--collective", "dispatch",    "--cluster",   "hgx-h800",
                                      "--model",      "deepseek-v3", "--ep",        "16",
                                      "--tokens",     "4096",        "--algorithm", "deepep_normal"};
  const auto normal = csv_rows(args);
  REQUIRE(normal.size() == 1);
  CHECK(csv_rows(args)[0] == normal[0]);  // fixed-seed fan-out sample
  std::vector<std::string> nccl = args;
  nccl.back() = "nccl";
  const auto all_pairs = csv_rows(nccl);
  // NCCL moves every pair over the network in BF16: a GPU's 4,096 x 8 pairs, half to the other node.
  CHECK(cell(all_pairs[0], 4) == Approx(16 * 4096 * 8 / 2 * 14336.0));
  CHECK(all_pairs[0].at(5) == "nccl/graph");
  // DeepEP sends a token once per other node it reaches (at most 1), in FP8: far fewer network bytes.
  CHECK(cell(normal[0], 4) <= 16 * 4096 * 7392.0);
  CHECK(cell(normal[0], 4) > 0.0);
  const test::Cli table = test::cli({"cost", "--collective", "dispatch", "--cluster", "hgx-h800", "--model",
                                     "deepseek-v3", "--ep", "16", "--tokens", "128"});
  REQUIRE(table.code == 0);
  CHECK_THAT(table.out, Contains("EP16, nccl (bf16 14336 B/token), top-8 of 256 experts, 8 groups (limit 4)"));
  CHECK_THAT(table.out, !Contains("two-batch overlap"));
  // The normal kernels' table says what the exchange takes inside a two-batch step.
  std::vector<std::string> text = args;
  text.insert(text.begin(), "cost");
  const test::Cli deepep = test::cli(text);
  REQUIRE(deepep.code == 0);
  CHECK_THAT(deepep.out, Contains("under two-batch overlap it takes 1.28x (communication.overlap_exchange_factor)"));
}

TEST_CASE("epsim cost --collective: bad options name the option and what was expected") {
  const auto err = [](std::vector<std::string> args) {
    args.insert(args.begin(), "cost");
    const test::Cli r = test::cli(args);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    return r.err;
  };
  CHECK_THAT(
      err({"--collective", "broadcast", "--cluster", "hgx-h100"}),
      Contains("--collective: unknown \"broadcast\"; valid: dispatch, combine, all_reduce, all_gather, send_recv"));
  CHECK_THAT(err({"--collective", "dispatch", "--cluster", "hgx-h100", "--model", "deepseek-v3"}),
             Contains("--ep: dispatch and combine need the EP group size"));
  CHECK_THAT(err({"--collective", "dispatch", "--cluster", "hgx-h100", "--model", "deepseek-v3", "--ep", "24"}),
             Contains("--ep: 24 GPUs must divide --experts 256 evenly"));
  CHECK_THAT(err({"--collective", "dispatch", "--cluster", "hgx-h100", "--ep", "8", "--top-k", "8", "--experts", "64"}),
             Contains("--hidden: required for dispatch without --model or --config"));
  CHECK_THAT(err({"--collective", "combine", "--cluster", "hgx-h100", "--model", "deepseek-v3", "--ep", "12"}),
             Contains("--ep: a group larger than a node spans whole nodes: expected a multiple of 8 GPUs, got 12"));
  CHECK_THAT(err({"--collective", "dispatch", "--cluster", "hgx-h100", "--model", "deepseek-v3", "--ep", "8",
                  "--algorithm", "deepep"}),
             Contains("--algorithm: unknown \"deepep\"; valid: nccl, deepep_normal, deepep_low_latency"));
  CHECK_THAT(err({"--collective", "send_recv", "--cluster", "hgx-h100", "--ep", "8"}),
             Contains("--ep applies to dispatch and combine, not send_recv"));
  CHECK_THAT(err({"--collective", "send_recv", "--cluster", "hgx-h100", "--nodes", "1", "--peer", "8"}),
             Contains("--peer: expected a GPU of the cluster other than 0 (1 .. 7), got 8"));
  CHECK_THAT(err({"--collective", "all_reduce", "--cluster", "hgx-h100", "--nodes", "1", "--gpus", "16"}),
             Contains("--gpus: all_reduce needs 2 .. 8 GPUs (the cluster's), got 16"));
  CHECK_THAT(err({"--collective", "all_gather", "--cluster", "hgx-h100", "--gpus", "20"}),
             Contains("--gpus: an all_gather larger than a node spans whole nodes: expected a multiple of 8 GPUs, got "
                      "20"));
  CHECK_THAT(err({"--collective", "all_gather", "--cluster", "hgx-h100", "--bytes", "1X"}),
             Contains("--bytes: expected a comma-separated list of sizes from 1 byte to 1 TiB"));
  CHECK_THAT(err({"--collective", "send_recv"}), Contains("give --cluster PRESET or --config TOML"));
  CHECK_THAT(err({"--collective", "send_recv", "--cluster", "dgx-nope"}), Contains("--cluster: unknown"));
}

TEST_CASE("epsim cost --collective: sizes that are not finite, not positive or out of bounds are refused") {
  const auto err = [](std::vector<std::string> args) {
    args.insert(args.begin(), "cost");
    const test::Cli r = test::cli(args);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    return r.err;
  };
  // tokens x top_k once overflowed to a 0.00 us exchange; inf bytes printed inf and -nan.
  const std::vector<std::string> dispatch{"--collective", "dispatch",    "--cluster", "hgx-h100",
                                          "--model",      "deepseek-v3", "--ep",      "8"};
  for (const std::string tokens : {"9223372036854775807", "16777217", "0", "-1", "1e3"}) {
    auto args = dispatch;
    args.insert(args.end(), {"--tokens", tokens});
    CHECK_THAT(
        err(args),
        Contains("--tokens: expected a comma-separated list of token counts in [1, 16777216], got \"" + tokens + "\""));
  }
  for (const std::string bytes : {"inf", "nan", "-inf", "0", "0.4", "1025G", "1e300", "-1K"}) {
    CHECK_THAT(err({"--collective", "all_reduce", "--cluster", "hgx-h100", "--bytes", bytes}),
               Contains("--bytes: expected a comma-separated list of sizes from 1 byte to 1 TiB (bytes, or with K, M, "
                        "G binary suffixes: at most 1024G), got \"" +
                        bytes + "\""));
  }
  CHECK_THAT(err({"--collective", "dispatch", "--cluster", "hgx-h100", "--ep", "8", "--top-k", "8", "--experts", "64",
                  "--hidden", "9223372036854775807"}),
             Contains("--hidden: expected a hidden size in [1, 1048576], got 9223372036854775807"));
  // The bounds themselves are priced, finitely.
  auto at_bound = dispatch;
  at_bound.insert(at_bound.end(), {"--tokens", "16777216"});
  const auto big = csv_rows(at_bound);
  CHECK(std::isfinite(cell(big[0], 1)));
  CHECK(cell(big[0], 1) > 1e3);
  const auto tib = csv_rows({"--collective", "all_reduce", "--cluster", "hgx-h100", "--bytes", "1024G"});
  CHECK(cell(tib[0], 0) == 1024.0 * k_gib);
  CHECK(std::isfinite(cell(tib[0], 1)));
}

TEST_CASE("all_reduce across nodes: NCCL's choice (tree LL small, NVLS tree or ring large), as calibrate prices it") {
  // 32 GPUs of HGX H100 (4 nodes). 1 KiB: tree LL = 6.8 + 2 x (7 x 0.6 + log2(4) x 5.0) = 35.2 us at
  // min(369 x 0.92 / 3.8, 20.4) x 0.5 GB/s x NCCL's tree correction 0.9 (LL, 64 B x 2^4), after the 6 us
  // launch. 1 GiB: NVLS tree = 25 + 2 x 2 x 20.9 us
  // at min(274, 8 x 47 x 32 / 62) GB/s.
  const auto rows =
      csv_rows({"--collective", "all_reduce", "--cluster", "hgx-h100", "--gpus", "32", "--bytes", "1K,1G"});
  REQUIRE(rows.size() == 2);
  CHECK(cell(rows[0], 1) == Approx(6.0 + 35.2 + 1024.0 / (20.4 * 0.5 * 0.9) / 1e3));
  CHECK(rows[0].at(5) == "tree/LL");
  CHECK(cell(rows[1], 1) == Approx(6.0 + 108.6 + k_gib / (8.0 * 47.0 * 32.0 / 62.0) / 1e3));
  CHECK(rows[1].at(5) == "nvlstree/Simple");
  for (const auto& row : rows) {
    // calibrate prices a measured all_reduce row of that shape the same (row_pricing.hpp).
    calibration::Measurement m;
    m.op = calibration::MeasuredOp::all_reduce;
    m.bytes = cell(row, 0);
    m.gpus = 32;
    m.gpus_per_node = 8;
    CHECK(cell(row, 1) == Approx(experiments::price_collective_row_us(m, hardware::load_cluster_preset("hgx-h100"))));
  }
  // HGX A100 (no NVLS), 2 nodes, 1 GiB: ring Simple = 8.4 + 28 x max(3.4, 3 x 1.0) + 2 x 14 us at
  // min(246, 8 x 25 x 0.94) x 16 / 30 GB/s: the NICs decide.
  const auto two = csv_rows({"--collective", "all_reduce", "--cluster", "hgx-a100", "--gpus", "16", "--bytes", "1G"});
  CHECK(two[0].at(5) == "ring/Simple");
  CHECK(cell(two[0], 1) == Approx(6.0 + 131.6 + k_gib / (188.0 * 16.0 / 30.0) / 1e3));
}

TEST_CASE("all_gather over thousands of GPUs: per-GPU ports, memory linear in the GPUs") {
  // 2,048 GPUs (256 nodes): every GPU sends b to its 7 node peers and to the 2,040 others; the NIC's
  // 2,040 b / 47 GB/s decides. On the graph this was every pair's route (GPUs squared in memory).
  const auto rows =
      csv_rows({"--collective", "all_gather", "--cluster", "hgx-h100", "--gpus", "2048", "--bytes", "1M"});
  REQUIRE(rows.size() == 1);
  const double b = 1048576.0;
  hardware::ClusterSpec big = hardware::load_cluster_preset("hgx-h100");
  big.nodes = 256;
  const double alpha_us = hardware::NetworkGraph(big).port_view().inter().latency_us;
  CHECK(cell(rows[0], 1) == Approx(alpha_us + std::max(7.0 * b / 369.0, 2040.0 * b / 47.0) / 1e3));
  CHECK(rows[0].at(5) == "ports");
  // The graph model is refused beyond its bound, before any route is made: small.toml without its speed
  // factors, on 256 nodes of 8, costed on the graph.
  std::ifstream in(std::string(EPSIM_TEST_DATA_DIR) + "/small.toml");
  std::string config;
  for (std::string line; std::getline(in, line);) {
    config += line.starts_with("speed_factors") ? "" : line + "\n";
  }
  const std::filesystem::path file = std::filesystem::temp_directory_path() / "epsim_cost_graph_bound.toml";
  std::ofstream(file) << config;
  const test::Cli graph =
      test::cli({"cost", "--collective", "all_gather", "--config", file.string(), "--set", "cluster.nodes=256", "--set",
                 "cluster.gpus_per_node=8", "--set", "cluster.collective_model=\"graph\"", "--gpus", "2048"});
  CHECK(graph.code == 2);
  CHECK_THAT(graph.err, Contains("2048 GPUs on the graph collective model"));
  std::filesystem::remove(file);
}

TEST_CASE("epsim cost --help documents the collective mode") {
  const test::Cli r = test::cli({"cost", "--help"});
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("usage: epsim cost --collective KIND"));
  CHECK_THAT(r.out, Contains("--algorithm"));
  CHECK_THAT(r.out, Contains("--peer"));
}
