// SPDX-License-Identifier: Apache-2.0
// `epsim cost --model`: the expert column's active experts, expected under uniform routing by default
// (hand-computed), an explicit count split exactly, and a GPU preset given as a file.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "experiments/cli/cost_table.hpp"
#include "hardware/gpu_spec.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/csv.hpp"

using namespace epsim;
using Catch::Contains;

namespace {

// Cells of the row of `tokens` of a successful `epsim cost ... --csv`.
std::vector<std::string> row_of(std::vector<std::string> args, const std::string& tokens) {
  args.insert(args.begin(), "cost");
  args.push_back("--csv");
  const test::Cli r = test::cli(args);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto at = r.out.find("\n" + tokens + ",");
  REQUIRE(at != std::string::npos);
  return test::csv_cells(r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1));
}

// Mixtral's expert on an H100 (expert_ffn: 65 % of 989 TFLOP/s, 80 % of 3350 GB/s, 4 us launch):
// SwiGLU 3 x 4096 x 14336 BF16 weights per active expert, `tokens` in and out at 2 bytes.
double mixtral_expert_us(double active, double padded, double tokens, double hbm_gbps = 3350.0) {
  const double per_token = 3.0 * 4096 * 14336;
  const double flops = 2.0 * padded * per_token;
  const double bytes = active * per_token * 2.0 + tokens * 2.0 * 4096 * 2.0;
  return std::max(flops / (989e3 * 0.65), bytes / (hbm_gbps * 0.80)) / 1e3 + 4.0;
}

}  // namespace

TEST_CASE("expected active experts: n pairs uniformly on `local` experts") {
  CHECK(experiments::expected_active_local(8, 1) == Approx(1.0));
  CHECK(experiments::expected_active_local(8, 2) == Approx(8.0 * (1.0 - 49.0 / 64.0)));  // 1.875
  CHECK(experiments::expected_active_local(8, 8) == Approx(5.2511286735534668));         // 8 (1 - (7/8)^8)
  CHECK(experiments::expected_active_local(1, 100) == Approx(1.0));
}

TEST_CASE("cost: by default the expected active experts, each given the share rounded up and padded") {
  const std::vector<std::string> args{"--gpu",           "h100", "--model",  "mixtral-8x7b",
                                      "--local-experts", "8",    "--tokens", "1,8"};
  // 1 pair: exactly one expert, padded to 16.
  const auto one = row_of(args, "1");
  CHECK(std::stod(one[1]) == Approx(1.0));
  CHECK(std::stod(one[2]) == Approx(mixtral_expert_us(1.0, 16.0, 1.0)));
  // 8 pairs on 8 experts: 8 (1 - (7/8)^8) = 5.2511 active; 8 <= 8 experts: tile 16; share ceil(1.52) = 2
  // -> 16 each.
  const double active = 8.0 * (1.0 - std::pow(7.0 / 8.0, 8.0));
  const auto eight = row_of(args, "8");
  CHECK(std::stod(eight[1]) == Approx(active));
  CHECK(std::stod(eight[2]) == Approx(mixtral_expert_us(active, active * 16.0, 8.0)));
  CHECK(eight[3] == "memory");
  // The text table shows it with one decimal.
  auto text = args;
  text.insert(text.begin(), "cost");
  CHECK_THAT(test::cli(text).out, Contains("       8     5.3 |"));
  // An explicit count splits the 8 tokens exactly: 3, 3, 2, each padded to 16.
  auto given = args;
  given.insert(given.end(), {"--experts-active", "3"});
  const auto three = row_of(given, "8");
  CHECK(std::stod(three[1]) == 3.0);
  CHECK(std::stod(three[2]) == Approx(mixtral_expert_us(3.0, 48.0, 8.0)));
}

TEST_CASE("cost --gpu takes a preset file (.toml)") {
  const std::filesystem::path file = std::filesystem::temp_directory_path() / "epsim_cost_half_bw_gpu.toml";
  std::ofstream(file) << "name = \"Half-bandwidth H100\"\nbf16_tflops = 989.0\nfp16_tflops = 989.0\n"
                         "fp8_tflops = 1979.0\nhbm_gbps = 1675.0\nmemory_gib = 80.0\ntdp_w = 700.0\n";
  // One Mixtral expert (local 1) and one token: all weight streaming, at half the bandwidth.
  const auto row = row_of({"--gpu", file.string(), "--model", "mixtral-8x7b", "--tokens", "1"}, "1");
  CHECK(std::stod(row[2]) == Approx(mixtral_expert_us(1.0, 16.0, 1.0, 1675.0)));
  const test::Cli shape =
      test::cli({"cost", "--op", "dense_gemm", "--gpu", file.string(), "--shape", "m=1", "n=64", "k=64"});
  CHECK_THAT(shape.out, Contains("dense_gemm on Half-bandwidth H100 (speed 1)"));
  std::filesystem::remove(file);
  const test::Cli missing = test::cli({"cost", "--gpu", file.string(), "--model", "mixtral-8x7b"});
  CHECK(missing.code == 2);
  CHECK_THAT(missing.err, Contains("--gpu: gpus preset file"));
}

TEST_CASE("cost: the shared experts + router and the elementwise kernels of a MoE layer, by hand") {
  // Mixtral-8x7B on an H100 at 64 tokens: no shared expert, so the column is the router alone: a BF16
  // 4096 x 8 gate (dense_gemm: 75 % of 989 TFLOP/s, 85 % of 3350 GB/s), 64 x (4096 + 8) activations.
  const auto row = row_of({"--gpu", "h100", "--model", "mixtral-8x7b", "--tokens", "64"}, "64");
  REQUIRE(row.size() == 13);
  const double router_bytes = 4096.0 * 8 * 2 + 64.0 * (4096 + 8) * 2;
  const double router_flops = 2.0 * 64 * 4096 * 8;
  CHECK(std::stod(row[10]) ==
        Approx(std::max(router_flops / (989e3 * 0.75), router_bytes / (3350.0 * 0.85)) / 1e3 + 4));
  CHECK(row[11] == "memory");
  // Elementwise (with the permutation, no --config): per token 2 norms (8 x 4096), RoPE (2 x 40 x 128),
  // SiLU of 2 experts (2 x 3 x 14336), sum (3 x 4096) BF16 elements, router logits 64 B, permutation
  // 2 x 2 x 4096 x 4 B; 8 kernels of 4 us.
  const double per_token = (32768.0 + 10240 + 86016 + 12288) * 2 + 64 + 65536;
  CHECK(std::stod(row[12]) == Approx(64.0 * per_token / (3350.0 * 0.85) / 1e3 + 8 * 4.0));
}

TEST_CASE(
    "cost --config: a pool on DeepEP's low-latency kernels prices the elementwise kernels without the permutation") {
  const std::string decode =
      (std::filesystem::path(EPSIM_TEST_DATA_DIR) / ".." / ".." / "examples/deployments/sglang-decode-ep72.toml")
          .string();
  const auto row = row_of({"--config", decode, "--tokens", "128"}, "128");
  // DeepSeek-V3, 489,728 B per token (tests/models/layer_work_test.cpp), 12 kernels, on the example's
  // h100-calibrated GPU (dense_gemm BF16 memory efficiency: the elementwise kernels are BF16).
  const double bw = 3350.0 * hardware::load_gpu_preset("h100-calibrated").efficiency[0][0].memory;
  CHECK(std::stod(row[12]) == Approx(128.0 * 489728 / bw / 1e3 + 12 * 4.0));
  const test::Cli text = test::cli({"cost", "--config", decode, "--tokens", "128"});
  CHECK_THAT(text.out, Contains("elementwise kernels of a MoE layer without the permutation"));
}
