// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "calibration/measurement_table.hpp"
#include "core/error.hpp"
#include "experiments/assembly/builders.hpp"
#include "experiments/assembly/experiment_config.hpp"
#include "experiments/assembly/row_pricing.hpp"
#include "models/layer_work.hpp"
#include "tests/support/cli.hpp"

namespace fs = std::filesystem;
using namespace epsim;
using calibration::MeasuredOp;
using calibration::Measurement;
using Catch::Contains;

namespace {

const std::string k_small = std::string(EPSIM_TEST_DATA_DIR) + "/small.toml";

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Mixtral's expert FFN on an H100 measured at exactly `factor` x the roofline, at every token count.
fs::path write_table(const fs::path& dir, double factor) {
  const hardware::GpuSpec h100 = hardware::load_gpu_preset("h100");
  calibration::MeasurementTable t;
  for (std::int64_t tokens = 1; tokens <= 4096; tokens *= 4) {
    Measurement m;
    m.gpu = "h100";
    m.op = MeasuredOp::expert_ffn;
    m.tokens = tokens;
    m.experts = 2;
    m.top_k = 2;
    m.hidden = 4096;
    m.intermediate = 14336;
    m.latency_us = factor * experiments::price_kernel_row_us(m, h100);
    t.rows.push_back(m);
  }
  const fs::path p = dir / "measured.csv";
  std::ofstream(p) << calibration::format_measurement_table(t);
  return p;
}

fs::path temp_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("epsim_measured_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

}  // namespace

TEST_CASE("a measured table prices the expert FFN of a run and of its cost curves, deterministically") {
  const fs::path dir = temp_dir("run");
  const fs::path table = write_table(dir, 2.0);
  const std::string set = "calibration.table=\"" + table.string() + "\"";
  const experiments::ExperimentConfig plain = experiments::load_config(k_small, {});
  const experiments::ExperimentConfig measured = experiments::load_config(k_small, {set});
  const auto plain_cost = experiments::make_cost_model(plain);
  const auto cost = experiments::make_cost_model(measured);
  // Expert FFN kernels of any size cost twice the roofline (the table's constant ratio, held beyond its
  // range); every other family is the roofline's.
  for (const double tokens : {1.0, 100.0, 3000.0, 50000.0}) {
    const hardware::KernelWork w = models::expert_ffn_work(plain.model, tokens, tokens, 2.0);
    for (int g = 0; g < 4; ++g) {
      CHECK(cost->kernel_ns(g, w) == Approx(2.0 * plain_cost->kernel_ns(g, w)));
    }
    const hardware::KernelWork a = models::attention_projection_work(plain.model, tokens);
    CHECK(cost->kernel_ns(1, a) == plain_cost->kernel_ns(1, a));
  }
  // A run with it is slower, and the same twice.
  const auto tpot = [](const fs::path& out) {
    return nlohmann::json::parse(read(out / "summary.json"))["metrics"]["tpot_ms"]["mean"].get<double>();
  };
  REQUIRE(test::cli({"run", k_small, "--out", (dir / "plain").string()}).code == 0);
  REQUIRE(test::cli({"run", k_small, "--set", set, "--out", (dir / "a").string()}).code == 0);
  REQUIRE(test::cli({"run", k_small, "--set", set, "--out", (dir / "b").string()}).code == 0);
  CHECK(tpot(dir / "a") > 1.3 * tpot(dir / "plain"));
  CHECK(read(dir / "a" / "summary.json") == read(dir / "b" / "summary.json"));
  fs::remove_all(dir);
}

TEST_CASE("measured all-reduces and all-to-alls become the run's collective curves") {
  const fs::path dir = temp_dir("collectives");
  const experiments::ExperimentConfig plain = experiments::load_config(k_small, {});
  calibration::MeasurementTable t;
  for (double bytes = 4096; bytes <= 1 << 28; bytes *= 16) {
    for (const auto op : {MeasuredOp::all_reduce, MeasuredOp::all_to_all}) {
      Measurement m;
      m.gpu = "h100";
      m.op = op;
      m.bytes = bytes;
      m.gpus = op == MeasuredOp::all_reduce ? 2 : 4;
      m.gpus_per_node = 2;
      // Measured at 1.5 x (all-reduce) and 3 x (all-to-all) what the model charges on the config's cluster.
      m.latency_us =
          (op == MeasuredOp::all_reduce ? 1.5 : 3.0) * experiments::price_collective_row_us(m, plain.cluster);
      t.rows.push_back(m);
    }
  }
  std::ofstream(dir / "nccl.csv") << calibration::format_measurement_table(t);
  const std::string set = "calibration.table=\"" + (dir / "nccl.csv").string() + "\"";
  const experiments::ExperimentConfig cfg = experiments::load_config(k_small, {set});
  REQUIRE(cfg.collectives.all_reduce_curve);
  REQUIRE(cfg.collectives.exchange_curve);
  for (const double ns : {100.0, 1e4, 1e6, 1e9}) {
    CHECK(cfg.collectives.all_reduce_curve->ratio(ns) == Approx(1.5));
    CHECK(cfg.collectives.exchange_curve->ratio(ns) == Approx(3.0));
  }
  // Kernel families without rows keep the roofline; asking for one collective leaves the other alone.
  CHECK(std::none_of(cfg.measured.kernel_curves.begin(), cfg.measured.kernel_curves.end(),
                     [](const auto& c) { return c != nullptr; }));
  const auto only = experiments::load_config(k_small, {set, "calibration.ops=[\"all_reduce\"]"});
  CHECK(only.collectives.all_reduce_curve);
  CHECK(!only.collectives.exchange_curve);
  fs::remove_all(dir);
}

TEST_CASE("a bad [calibration] section names the file and the key") {
  const fs::path dir = temp_dir("errors");
  const fs::path table = write_table(dir, 2.0);
  const std::string set = "calibration.table=\"" + table.string() + "\"";
  CHECK_THROWS_WITH(experiments::load_config(k_small, {"calibration.table=\"/nowhere/t.csv\""}),
                    "/nowhere/t.csv: cannot read the measurement table");
  CHECK_THROWS_WITH(experiments::load_config(k_small, {set, "calibration.ops=[\"gemm\"]"}),
                    Contains("calibration.ops: unknown \"gemm\""));
  CHECK_THROWS_WITH(experiments::load_config(k_small, {set, "calibration.ops=[\"attention_decode\"]"}),
                    Contains("no attention_decode rows to use as the cost of attention_decode"));
  CHECK_THROWS_WITH(experiments::load_config(k_small, {set, "calibration.ops=[\"all_reduce\"]"}),
                    Contains("no all_reduce rows inside a node to use as the cost of tensor-parallel all-reduces"));
  CHECK_THROWS_WITH(experiments::load_config(k_small, {set, "calibration.ops=[\"send_recv\"]"}),
                    Contains("calibration.ops: unknown \"send_recv\""));
  CHECK_THROWS_WITH(experiments::load_config(k_small, {set, "calibration.label=\"a100\""}),
                    Contains("no rows of GPU \"a100\"; its GPUs are: h100"));
  CHECK_THROWS_WITH(experiments::load_config(k_small, {"calibration.label=\"a100\""}),
                    Contains("calibration.table: label and ops need a table"));
  fs::remove_all(dir);
}
