// SPDX-License-Identifier: Apache-2.0
// `epsim cost --op OP --shape ...`: kernels of arbitrary shape priced by hand (a dense GEMM's roofline, the
// grouped expert kernel with its expected active experts), the sweep, the run's cost model under
// --config, and the usage errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/cli.hpp"
#include "tests/support/csv.hpp"

using namespace epsim;
using Catch::Contains;

namespace {

// Header and rows of a successful `epsim cost --op ... --csv`, each row as column -> cell.
struct Csv {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::string at(std::size_t row, const std::string& column) const {
    const auto it = std::find(header.begin(), header.end(), column);
    REQUIRE(it != header.end());
    return rows.at(row).at(static_cast<std::size_t>(it - header.begin()));
  }
  double num(std::size_t row, const std::string& column) const { return std::stod(at(row, column)); }
};

Csv cost_csv(std::vector<std::string> args) {
  args.insert(args.begin(), "cost");
  args.push_back("--csv");
  const test::Cli r = test::cli(args);
  INFO(r.err);
  REQUIRE(r.code == 0);
  std::istringstream in(r.out);
  std::string line;
  Csv c;
  std::getline(in, line);
  c.header = test::csv_cells(line);
  while (std::getline(in, line)) {
    c.rows.push_back(test::csv_cells(line));
  }
  return c;
}

// H100 preset (hardware/presets/gpus/h100.toml, default efficiencies of gpu_spec.hpp): 989 TFLOP/s BF16
// = 989e3 FLOP/ns, 3350 GB/s = 3350 B/ns; 4 us launch.
constexpr double k_flop_per_ns = 989e3;
constexpr double k_bytes_per_ns = 3350.0;
constexpr double k_launch_us = 4.0;

// (m x k) by (k x n) in BF16: 2mnk FLOPs; the weight n x k plus activations m x (k + n), 2 bytes each.
double gemm_flops(double m, double n, double k) {
  return 2.0 * m * n * k;
}
double gemm_bytes(double m, double n, double k) {
  return 2.0 * n * k + 2.0 * m * (k + n);
}

}  // namespace

TEST_CASE("cost --op dense_gemm: the hand roofline of a 128 x 4096 x 4096 BF16 GEMM on an H100") {
  const Csv c = cost_csv({"--op", "dense_gemm", "--gpu", "h100", "--shape", "m=128", "n=4096", "k=4096", "dtype=bf16"});
  REQUIRE(c.header == std::vector<std::string>{"m", "n", "k", "dtype", "flops", "bytes", "regime", "latency_us"});
  REQUIRE(c.rows.size() == 1);
  const double flops = 2.0 * 128 * 4096 * 4096;                        // 4,294,967,296
  const double bytes = 4096.0 * 4096 * 2 + 128.0 * (4096 + 4096) * 2;  // 35,651,584
  const double compute_ns = flops / (k_flop_per_ns * 0.75);            // dense_gemm: 75 % of peak
  const double memory_ns = bytes / (k_bytes_per_ns * 0.85);            // 85 % of HBM
  CHECK(c.num(0, "flops") == flops);
  CHECK(c.num(0, "bytes") == bytes);
  CHECK(memory_ns > compute_ns);
  CHECK(c.num(0, "latency_us") == Approx(std::max(compute_ns, memory_ns) / 1e3 + k_launch_us));  // 16.52 us
  // Intensity 120.5 FLOP/B over the ridge 741,750 / 2,847.5 = 260.5: 0.46, under half.
  CHECK(c.at(0, "regime") == "memory");
  CHECK(c.at(0, "dtype") == "bf16");
}

TEST_CASE("cost --op: one key's list is a sweep, one row per value") {
  const Csv c = cost_csv(
      {"--op", "dense_gemm", "--gpu", "h100", "--shape", "m=1,128,8192", "--shape", "n=4096", "--shape", "k=4096"});
  REQUIRE(c.rows.size() == 3);
  const double ms[3] = {1.0, 128.0, 8192.0};
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(c.num(i, "m") == ms[i]);
    CHECK(c.num(i, "flops") == gemm_flops(ms[i], 4096, 4096));
    CHECK(c.num(i, "bytes") == gemm_bytes(ms[i], 4096, 4096));
  }
  // 8192 rows: 6.3 times the ridge, compute-bound. Its 64 x 32 = 2,048 output tiles of 128 x 128 run in
  // ceil(2048 / 132) = 16 waves over the H100's 132 SMs: 2,112 tile slots for 2,048 tiles.
  CHECK(c.at(2, "regime") == "compute");
  CHECK(c.num(2, "latency_us") ==
        Approx(gemm_flops(8192, 4096, 4096) / (k_flop_per_ns * 0.75) * (2112.0 / 2048.0) / 1e3 + k_launch_us));
}

TEST_CASE("cost --op expert_ffn: expected active experts under uniform routing, padded to the tile") {
  const Csv c = cost_csv({"--op", "expert_ffn", "--gpu", "h100", "--shape", "tokens=1,4", "experts=8", "top_k=2",
                          "hidden=4096", "intermediate=14336"});
  REQUIRE(c.rows.size() == 2);
  // 1 token picks 2 distinct experts of 8: exactly 2 active. 4 tokens: 8 (1 - (6/8)^4) = 5.46875.
  CHECK(c.num(0, "pairs") == 2.0);
  CHECK(c.num(0, "active_experts") == Approx(2.0));
  CHECK(c.num(1, "pairs") == 8.0);
  CHECK(c.num(1, "active_experts") == Approx(5.46875));
  // 8 pairs <= 8 experts: tile 16. Shares: 2 / 2 = 1 and ceil(8 / 5.46875) = 2, each padded to 16.
  CHECK(c.num(0, "padded_tokens") == Approx(32.0));
  CHECK(c.num(1, "padded_tokens") == Approx(5.46875 * 16.0));
  // One token: SwiGLU 3 x 4096 x 14336 weights of 2 active experts in BF16, 2 pairs in and out.
  const double per_token = 3.0 * 4096 * 14336;
  const double flops = 2.0 * 32.0 * per_token;
  const double bytes = 2.0 * per_token * 2.0 + 2.0 * 2.0 * 4096 * 2.0;
  CHECK(c.num(0, "flops") == Approx(flops));
  CHECK(c.num(0, "bytes") == Approx(bytes));
  const double us = std::max(flops / (k_flop_per_ns * 0.65), bytes / (k_bytes_per_ns * 0.80)) / 1e3 + k_launch_us;
  CHECK(c.num(0, "latency_us") == Approx(us));
  CHECK(c.at(0, "regime") == "memory");
  // Given active experts replace the expectation.
  const Csv given = cost_csv({"--op", "expert_ffn", "--gpu", "h100", "--shape", "tokens=4", "experts=8", "top_k=2",
                              "hidden=4096", "intermediate=14336", "active_experts=8"});
  CHECK(given.num(0, "active_experts") == 8.0);
  CHECK(given.num(0, "padded_tokens") == 8.0 * 16.0);
}

TEST_CASE("cost --op --config: priced by the run's cost model (a GPU at speed 0.5 doubles the body)") {
  const std::string small = std::string(EPSIM_TEST_DATA_DIR) + "/small.toml";
  const std::vector<std::string> shape{"--op", "dense_gemm", "--shape", "m=8192", "n=4096", "k=4096"};
  auto half = shape;
  half.insert(half.end(), {"--config", small, "--set", "cluster.speed_factors=[0.5, 1.0, 1.0, 1.0]"});
  // Compute-bound (w = 1); 16 waves of 132 tiles for its 2,048 (see the sweep above).
  const double body_us = gemm_flops(8192, 4096, 4096) / (k_flop_per_ns * 0.75) * (2112.0 / 2048.0) / 1e3;
  CHECK(cost_csv(half).num(0, "latency_us") == Approx(2.0 * body_us + k_launch_us));
  half.insert(half.end(), {"--gpu-index", "2"});  // GPU 2 runs at full speed
  CHECK(cost_csv(half).num(0, "latency_us") == Approx(body_us + k_launch_us));
  // A memory-bound kernel shows only its stress-weighted share of the slowdown (ViBE): less than double.
  auto gemv = half;
  gemv[3] = "m=1";
  gemv.back() = "0";
  // Intensity ~1 FLOP/B, under 0.1 of the ridge: weight 0.25, so it runs at 1 - 0.5 x 0.25 = 0.875.
  const double gemv_body = gemm_bytes(1, 4096, 4096) / (k_bytes_per_ns * 0.85) / 1e3;
  CHECK(cost_csv(gemv).num(0, "latency_us") == Approx(gemv_body / 0.875 + k_launch_us));
  // The text table names the GPU and its speed.
  auto text = shape;
  text.insert(text.end(), {"--gpu", "h100", "--speed", "0.5"});
  text.insert(text.begin(), "cost");
  const test::Cli t = test::cli(text);
  CHECK_THAT(t.out, Contains("dense_gemm on NVIDIA H100 SXM 80GB (speed 0.5)"));
  CHECK_THAT(t.out, Contains("compute"));
}

TEST_CASE("cost --op: bad ops, keys and lists are usage errors naming the option") {
  const auto err = [](std::vector<std::string> args) {
    args.insert(args.begin(), "cost");
    const test::Cli r = test::cli(args);
    CHECK(r.code == 2);
    return r.err;
  };
  CHECK_THAT(err({"--op", "dense_gemm", "--gpu", "h100", "--shape", "m=128"}),
             Contains("--shape: op dense_gemm is missing n, k; its keys: m, n, k, dtype (default bf16)"));
  CHECK_THAT(err({"--op", "dense_gemm", "--gpu", "h100", "--shape", "m=1", "n=2", "k=3", "tokens=4"}),
             Contains("--shape: expected KEY=VALUES with a key of op dense_gemm (m, n, k, dtype (default bf16)), got "
                      "\"tokens=4\""));
  CHECK_THAT(err({"--op", "gemm", "--gpu", "h100", "--shape", "m=1"}),
             Contains("--op: unknown kernel op \"gemm\"; valid: expert_ffn, dense_gemm, attention_prefill, "
                      "attention_decode"));
  CHECK_THAT(err({"--op", "all_reduce", "--gpu", "h100"}), Contains("--op: unknown kernel op \"all_reduce\""));
  CHECK_THAT(err({"--op", "dense_gemm", "--gpu", "h100", "--shape", "m=1,2", "n=2,4", "k=3"}),
             Contains("--shape: only one key may list values, got lists for m and n"));
  CHECK_THAT(err({"--op", "dense_gemm", "--gpu", "h100", "--shape", "m=x", "n=2", "k=3"}),
             Contains("--shape m: expected a positive whole number, got \"x\""));
  CHECK_THAT(err({"--op", "dense_gemm", "--gpu", "h100", "--shape", "m=1", "n=2", "k=3", "dtype=fp16"}),
             Contains("--shape dtype: expected bf16 or fp8, got \"fp16\""));
  // The measurement table's own checks, with the swept value in the message.
  CHECK_THAT(err({"--op", "expert_ffn", "--gpu", "h100", "--shape", "tokens=1", "experts=2,8", "top_k=4", "hidden=64",
                  "intermediate=64"}),
             Contains("--shape experts=2: column 'top_k': 4 experts per token but only 2 experts"));
  CHECK_THAT(err({"--op", "dense_gemm", "--shape", "m=1", "n=2", "k=3"}),
             Contains("give --gpu NAME|FILE.toml or --config"));
  CHECK_THAT(err({"--op", "dense_gemm", "--gpu", "b100", "--shape", "m=1", "n=2", "k=3"}), Contains("--gpu: unknown"));
}

TEST_CASE("cost --help shows the shape mode and every kernel op's keys") {
  const test::Cli r = test::cli({"cost", "--help"});
  CHECK_THAT(r.out, Contains("usage: epsim cost --op OP --shape KEY=VALUES..."));
  CHECK_THAT(r.out, Contains("attention_decode: batch, q_tokens, kv_tokens, heads, kv_heads, head_dim, dtype"));
  CHECK_THAT(r.out, Contains("active_experts (default: expected under uniform routing)"));
}
