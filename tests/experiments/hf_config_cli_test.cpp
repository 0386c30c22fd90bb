// SPDX-License-Identifier: Apache-2.0
// `epsim list models --from-hf FILE` and [model] hf_config from the command line: what the reader
// derives is printed as a loadable [model] table, and a run from a config.json equals the run from the
// preset derived from the same file.
#include <unistd.h>

#include <fmt/format.h>
#include <toml++/toml.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "tests/support/cli.hpp"

namespace fs = std::filesystem;
using Catch::Contains;

namespace {
using epsim::test::cli;
const std::string k_data = EPSIM_TEST_DATA_DIR;
const std::string k_small = k_data + "/small.toml";
const std::string k_mixtral = k_data + "/hf_configs/mixtral-8x7b.json";

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

TEST_CASE("list models --from-hf prints the derived [model] table and the ignored fields") {
  const auto r = cli({"list", "models", "--from-hf", k_data + "/hf_configs/deepseek-v3.json"});
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("# DeepseekV3ForCausalLM from "));
  CHECK_THAT(r.out, Contains("[model]\nname = \"deepseek-v3\"\nhidden_size = 7168\nnum_layers = 61\n"));
  CHECK_THAT(r.out, Contains("routed_experts = 256"));
  CHECK_THAT(r.out, Contains("weight_dtype = \"fp8\""));
  CHECK_THAT(r.out, Contains("fields known not to change the cost (ignored):"));
  CHECK_THAT(r.out, Contains(" rope_scaling "));
  // Loadable: the text is TOML whose [model] table has the printed values.
  const toml::table t = toml::parse(r.out);
  CHECK(t["model"]["num_heads"].value_or(0) == 128);

  const auto bad = cli({"list", "models", "--from-hf", k_data + "/hf_configs/no-such-config.json"});
  CHECK(bad.code != 0);
  CHECK_THAT(bad.err, Contains("no-such-config.json"));
  const auto usage = cli({"list", "gpus", "--from-hf", k_mixtral});
  CHECK(usage.code == 2);
  CHECK_THAT(usage.err, Contains("--from-hf FILE goes with \"models\""));
}

TEST_CASE("a run from model.hf_config equals the run from the preset derived from the same file") {
  const fs::path base = fs::temp_directory_path() / ("epsim_hf_cli_" + std::to_string(::getpid()));
  fs::remove_all(base);
  const auto preset = cli({"run", k_small, "--out", (base / "preset").string()});
  REQUIRE(preset.code == 0);
  const auto hf = cli({"run", k_small, "--out", (base / "hf").string(), "--set", "model.preset=\"\"", "--set",
                       "model.hf_config=\"" + k_mixtral + "\""});
  INFO(hf.err);
  REQUIRE(hf.code == 0);
  // Same requests, same times: the model is the same (its name aside, which requests.csv does not carry).
  CHECK(read_file(base / "hf" / "requests.csv") == read_file(base / "preset" / "requests.csv"));

  const auto both =
      cli({"run", k_small, "--out", (base / "both").string(), "--set", "model.hf_config=\"" + k_mixtral + "\""});
  CHECK(both.code != 0);
  CHECK_THAT(both.err, Contains("model.hf_config: give either preset or hf_config, not both"));
  const auto missing = cli({"run", k_small, "--out", (base / "missing").string(), "--set", "model.preset=\"\"", "--set",
                            "model.hf_config=\"/nonexistent/config.json\""});
  CHECK(missing.code != 0);
  CHECK_THAT(missing.err, Contains("model.hf_config: /nonexistent/config.json"));
  fs::remove_all(base);
}

TEST_CASE("docs/model.md's DeepSeek Sparse Attention figures are what epsim cost prints") {
  // One layer on H200, 64 tokens: decode attention at 131,072 tokens of context, and the prefill.
  const auto row = [](const std::string& model, const std::string& context) {
    const auto r = cli({"cost", "--gpu", "h200", "--model", model, "--tokens", "64", "--context", context, "--csv"});
    REQUIRE(r.code == 0);
    std::istringstream lines(r.out);
    std::string line;
    std::getline(lines, line);  // header
    std::getline(lines, line);
    std::vector<std::string> cells;
    std::istringstream fields(line);
    for (std::string c; std::getline(fields, c, ',');) {
      cells.push_back(c);
    }
    REQUIRE(cells.size() > 6);
    return std::pair{std::stod(cells[4]), std::stod(cells[6])};  // prefill, decode attention us
  };
  const auto [v3_prefill, v3_decode] = row("deepseek-v3", "131072");
  const auto [v32_prefill, v32_decode] = row("deepseek-v3.2", "131072");
  std::ifstream in(std::string(EPSIM_SOURCE_DIR) + "/docs/model.md");
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // As the doc writes them: whole microseconds with a thousands comma, or one decimal.
  const auto us = [](double v, int digits) {
    if (digits == 0) {
      const long n = std::lround(v);
      return (n >= 1000 ? std::to_string(n / 1000) + "," + fmt::format("{:03d}", n % 1000) : std::to_string(n)) + " us";
    }
    return fmt::format("{:.1f} us", v);
  };
  CHECK_THAT(doc, Contains("costs " + us(v32_decode, 0) + " for `deepseek-v3.2` against " + us(v3_decode, 0)));
  CHECK_THAT(doc,
             Contains("a 64-token prefill layer on H200: " + us(v32_prefill, 1) + " against " + us(v3_prefill, 1)));
}
