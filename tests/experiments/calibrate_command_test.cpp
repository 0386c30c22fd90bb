// SPDX-License-Identifier: Apache-2.0
#include <toml++/toml.h>
#include <boost/random/mersenne_twister.hpp>
#include <boost/random/normal_distribution.hpp>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "calibration/collective_fit.hpp"
#include "calibration/measured_work.hpp"
#include "calibration/measurement_table.hpp"
#include "core/params.hpp"
#include "experiments/assembly/row_pricing.hpp"
#include "hardware/roofline.hpp"
#include "tests/support/cli.hpp"

namespace fs = std::filesystem;
using namespace epsim;
using calibration::MeasuredOp;
using calibration::Measurement;
using Catch::Contains;

namespace {

using test::cli;

fs::path temp_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("epsim_calibrate_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p) << text;
}

hardware::GpuSpec read_gpu(const fs::path& p) {
  const toml::table t = toml::parse_file(p.string());
  core::ParamTable pt({core::ParamLayer{&t, p.string()}}, "gpu");
  return hardware::parse_gpu_spec(pt);
}

// Expert FFNs and GEMMs over a token sweep, priced on `truth` with lognormal noise `sigma`.
calibration::MeasurementTable kernel_table(const hardware::GpuSpec& truth, double sigma) {
  calibration::MeasurementTable t;
  boost::random::mt19937_64 rng(17);
  boost::random::normal_distribution<double> noise(0.0, sigma);
  for (std::int64_t tokens = 1; tokens <= 16384; tokens *= 2) {
    Measurement e;
    e.gpu = "lab-h100";
    e.op = MeasuredOp::expert_ffn;
    e.tokens = tokens;
    e.experts = 8;
    e.top_k = 2;
    e.hidden = 4096;
    e.intermediate = 14336;
    Measurement g;
    g.gpu = "lab-h100";
    g.op = MeasuredOp::dense_gemm;
    g.m = tokens;
    g.n = 6144;
    g.k = 4096;
    for (Measurement m : {e, g}) {
      m.latency_us = experiments::price_kernel_row_us(m, truth) * std::exp(noise(rng));
      t.rows.push_back(m);
    }
  }
  return t;
}

}  // namespace

TEST_CASE("calibrate fit writes a preset that calibrate check and a run read back, at the noise level") {
  hardware::GpuSpec truth = hardware::load_gpu_preset("h100");
  truth.set_family_efficiency(hardware::OpKind::expert_ffn, {0.52, 0.7, 3.0, 7.0});
  truth.set_family_efficiency(hardware::OpKind::dense_gemm, {0.8, 0.88, 2.0, 0.0});
  const fs::path dir = temp_dir("fit");
  const fs::path table = dir / "lab.csv";
  write(table, calibration::format_measurement_table(kernel_table(truth, 0.01)));

  const auto fit = cli({"calibrate", "fit", table.string(), "--gpu", "h100", "--out", (dir / "cal.toml").string()});
  REQUIRE(fit.code == 0);
  REQUIRE_THAT(fit.out, Contains("| expert_ffn | bf16 | any | 15 |"));
  REQUIRE_THAT(fit.out, Contains("| dense_gemm | bf16 | any | 15 |"));
  const hardware::GpuSpec cal = read_gpu(dir / "cal.toml");
  CHECK(cal.name == "NVIDIA H100 SXM 80GB (calibrated)");
  CHECK(cal.eff(hardware::OpKind::expert_ffn, hardware::Precision::bf16).compute == Approx(0.52).epsilon(0.03));
  CHECK(cal.eff(hardware::OpKind::dense_gemm, hardware::Precision::bf16).memory == Approx(0.88).epsilon(0.03));
  CHECK(cal.eff(hardware::OpKind::attention_decode, hardware::Precision::bf16).compute ==
        truth.eff(hardware::OpKind::attention_decode, hardware::Precision::bf16).compute);

  // check, on the calibrated preset by path: every group at the 1 % noise level; --out adds predicted_us.
  const fs::path checked = dir / "checked.csv";
  const auto check =
      cli({"calibrate", "check", table.string(), "--gpu", (dir / "cal.toml").string(), "--out", checked.string()});
  REQUIRE(check.code == 0);
  const auto back = calibration::read_measurement_table(checked);
  REQUIRE(back.extra_columns == std::vector<std::string>{"predicted_us"});
  REQUIRE(back.rows.size() == 30);
  for (const Measurement& m : back.rows) {
    const double predicted = std::stod(m.extra[0]);
    CHECK(predicted == Approx(experiments::price_kernel_row_us(m, cal)).epsilon(1e-5));
    CHECK(std::abs(predicted / m.latency_us - 1.0) < 0.04);
  }
  // The uncalibrated preset is visibly off on the same table.
  const auto before = cli({"calibrate", "check", table.string(), "--gpu", "h100"});
  REQUIRE_THAT(before.out, Contains("| expert_ffn | memory |"));
  std::istringstream groups(before.out);
  for (std::string line; std::getline(groups, line);) {
    if (line.starts_with("| expert_ffn |")) {
      // "| op | regime | rows | MAPE % | ...": the MAPE is the fourth cell.
      std::size_t at = 0;
      for (int bar = 0; bar < 4; ++bar) {
        at = line.find('|', at) + 1;
      }
      CHECK(std::stod(line.substr(at)) > 10.0);
    }
  }

  // A run accepts the calibrated preset by path.
  const auto run = cli({"validate", std::string(EPSIM_TEST_DATA_DIR) + "/small.toml", "--set",
                        "gpu.preset=\"" + (dir / "cal.toml").string() + "\""});
  CHECK(run.code == 0);
  fs::remove_all(dir);
}

TEST_CASE("calibrate fit recovers a cluster's collective parameters from collectives the model priced") {
  hardware::ClusterSpec truth = hardware::load_cluster_preset("hgx-h100");
  truth.collective_overhead_us = 9.0;
  truth.scale_up_link.efficiency = 0.7;
  truth.nic_link.latency_us = 4.0;
  truth.nic_link.efficiency = 0.8;
  calibration::MeasurementTable t;
  for (double bytes = 1024; bytes <= 1 << 30; bytes *= 8) {
    for (const auto& [op, gpus] : {std::pair{MeasuredOp::all_reduce, 8}, std::pair{MeasuredOp::all_to_all, 8},
                                   std::pair{MeasuredOp::all_to_all, 16}, std::pair{MeasuredOp::send_recv, 16}}) {
      Measurement m;
      m.gpu = "h100";
      m.op = op;
      m.bytes = bytes;
      m.gpus = gpus;
      m.gpus_per_node = 8;
      m.latency_us = experiments::price_collective_row_us(m, truth);
      t.rows.push_back(m);
    }
  }
  const fs::path dir = temp_dir("collectives");
  write(dir / "nccl.csv", calibration::format_measurement_table(t));
  const auto fit = cli({"calibrate", "fit", (dir / "nccl.csv").string(), "--cluster", "hgx-h100", "--cluster-out",
                        (dir / "cluster.toml").string()});
  REQUIRE(fit.code == 0);
  REQUIRE_THAT(fit.out, Contains("| all_to_all across nodes | 7 |"));
  const toml::table ct = toml::parse_file((dir / "cluster.toml").string());
  core::ParamTable cp({core::ParamLayer{&ct, "cluster.toml"}}, "cluster");
  const hardware::ClusterSpec c = hardware::parse_cluster_spec(cp);
  CHECK(c.collective_overhead_us == Approx(9.0).epsilon(0.01));
  CHECK(c.scale_up_link.efficiency == Approx(0.7).epsilon(0.01));
  CHECK(c.nic_link.latency_us == Approx(4.0).epsilon(0.02));
  CHECK(c.nic_link.efficiency == Approx(0.8).epsilon(0.01));
  // The cluster file is a preset by path for check.
  const auto check =
      cli({"calibrate", "check", (dir / "nccl.csv").string(), "--cluster", (dir / "cluster.toml").string()});
  REQUIRE(check.code == 0);
  // 7 sizes of 4 collectives, each priced as measured (the table was priced on the truth).
  std::size_t rows = 0;
  std::istringstream lines(check.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("| all_") || line.starts_with("| send_recv")) {
      // MAPE, max error and bias all print as 0.0 % (either sign).
      std::size_t zeros = 0;
      for (std::size_t at = line.find("0.0 %"); at != std::string::npos; at = line.find("0.0 %", at + 1)) {
        ++zeros;
      }
      CHECK(zeros == 3);
      rows += static_cast<std::size_t>(std::stoi(line.substr(
          line.find("tency |") != std::string::npos ? line.find("tency |") + 7 : line.find("width |") + 7)));
    }
  }
  CHECK(rows == 28);
  fs::remove_all(dir);
}

TEST_CASE("calibrate refuses bad requests naming what is wrong") {
  const fs::path dir = temp_dir("errors");
  write(dir / "two.csv", "gpu,op,m,n,k,dtype,latency_us\nh100,dense_gemm,1,2,3,bf16,4\na100,dense_gemm,1,2,3,bf16,4\n");
  const auto two = cli({"calibrate", "fit", (dir / "two.csv").string(), "--gpu", "h100", "--out", "x.toml"});
  CHECK(two.code == 2);
  CHECK_THAT(two.err, Contains("holds rows of several GPUs (h100, a100): pick one with --label"));
  write(dir / "lab.csv", "gpu,op,m,n,k,dtype,latency_us\nlab,dense_gemm,1,2,3,bf16,4\n");
  const auto label = cli({"calibrate", "check", (dir / "lab.csv").string()});
  CHECK(label.code != 0);
  CHECK_THAT(label.err, Contains("lab.csv:2: gpu \"lab\" is neither a GPU preset nor a preset file"));
  const auto no_gpu = cli({"calibrate", "fit", (dir / "lab.csv").string()});
  CHECK(no_gpu.code == 2);
  CHECK_THAT(no_gpu.err, Contains("give --gpu NAME|FILE and --out FILE.toml"));
  const auto missing = cli({"calibrate", "check", (dir / "lab.csv").string(), "--gpu", "nowhere.toml"});
  CHECK_THAT(missing.err, Contains("--gpu: gpus preset file \"nowhere.toml\" not found"));
  CHECK(cli({"calibrate", "frobnicate"}).code == 2);
  fs::remove_all(dir);
}

TEST_CASE("the shipped h100-calibrated preset is the fit of the shipped public table") {
  const fs::path root = fs::path(EPSIM_TEST_DATA_DIR) / ".." / "..";
  const fs::path dir = temp_dir("shipped");
  const auto fit = cli({"calibrate", "fit", (root / "data/profiles/public-h100.csv").string(), "--gpu", "h100", "--out",
                        (dir / "refit.toml").string()});
  REQUIRE(fit.code == 0);
  const hardware::GpuSpec refit = read_gpu(dir / "refit.toml");
  const hardware::GpuSpec shipped = hardware::load_gpu_preset("h100-calibrated");
  for (std::size_t k = 0; k < 4; ++k) {
    for (std::size_t p = 0; p < 3; ++p) {
      const hardware::Efficiency& s = shipped.efficiency[k][p];
      const hardware::Efficiency& r = refit.efficiency[k][p];
      CHECK(s.compute == Approx(r.compute).epsilon(1e-6));
      CHECK(s.memory == Approx(r.memory).epsilon(1e-6));
      CHECK(s.knee == Approx(r.knee).epsilon(1e-6));
      CHECK(s.fixed_us == Approx(r.fixed_us).margin(1e-6));
      CHECK(s.floor_us == Approx(r.floor_us).margin(1e-6));
      CHECK(s.softmax_head_dim == Approx(r.softmax_head_dim).epsilon(1e-6));
    }
  }
  CHECK(shipped.family_efficiency == refit.family_efficiency);
  CHECK(shipped.max_memory_efficiency == refit.max_memory_efficiency);
  CHECK(shipped.fp8_tflops == refit.fp8_tflops);
  fs::remove_all(dir);
}

TEST_CASE("calibrate check --config prices a row on its gpu_id: that GPU's speed factor, stress-weighted") {
  // small.toml: 4 H100s, GPU 1 at speed 0.9. The same two GEMMs on GPU 0 and GPU 1: one compute-bound
  // (shows the whole deviation: 0.9), one memory-bound (a quarter of it: 1 - 0.1 / 4 = 0.975).
  const hardware::GpuSpec h100 = hardware::load_gpu_preset("h100");
  calibration::MeasurementTable t;
  for (const int gpu_id : {0, 1}) {
    for (const std::int64_t m : {std::int64_t{1}, std::int64_t{16384}}) {
      Measurement g;
      g.gpu = "h100";
      g.op = MeasuredOp::dense_gemm;
      g.m = m;
      g.n = 6144;
      g.k = 4096;
      g.gpu_id = gpu_id;
      g.latency_us = 100.0;
      t.rows.push_back(g);
    }
  }
  const fs::path dir = temp_dir("check_gpu_id");
  write(dir / "ids.csv", calibration::format_measurement_table(t));
  const fs::path checked = dir / "checked.csv";
  const auto check = cli({"calibrate", "check", (dir / "ids.csv").string(), "--config",
                          std::string(EPSIM_TEST_DATA_DIR) + "/small.toml", "--out", checked.string()});
  REQUIRE(check.code == 0);
  const auto back = calibration::read_measurement_table(checked);
  REQUIRE(back.rows.size() == 4);
  for (const Measurement& m : back.rows) {
    const hardware::KernelWork w = calibration::kernel_work(h100, m);
    const double x = hardware::intensity_over_ridge(h100, w);
    REQUIRE((x < 0.1 || x > 1.0));  // wholly memory- or compute-bound: the weight is 1/4 or 1
    const double speed = m.gpu_id == 0 ? 1.0 : x > 1.0 ? 0.9 : 1.0 - 0.1 / 4.0;
    CHECK(std::stod(m.extra[0]) == Approx(hardware::roofline_cost(h100, w, speed).total_ns / 1e3).epsilon(1e-5));
  }
  // GPU 1's rows differ from GPU 0's: the config's speed factors are used.
  CHECK(std::stod(back.rows[3].extra[0]) > 1.05 * std::stod(back.rows[1].extra[0]));

  // A gpu_id the cluster does not have is named.
  t.rows[0].gpu_id = 4;
  write(dir / "bad.csv", calibration::format_measurement_table(t));
  const auto bad = cli(
      {"calibrate", "check", (dir / "bad.csv").string(), "--config", std::string(EPSIM_TEST_DATA_DIR) + "/small.toml"});
  CHECK(bad.code != 0);
  CHECK_THAT(bad.err, Contains("bad.csv:2: column 'gpu_id': 4 is not a GPU of the config's cluster (0 .. 3)"));
  fs::remove_all(dir);
}

TEST_CASE("calibrate fit checks what it writes with the readers' validator and writes nothing they refuse") {
  // Kernels of ~2 s each whatever their size (a table in the wrong unit): the fitted fixed cost per kernel
  // is ~2e6 us, beyond the 1e6 us a GPU preset's efficiency.*.fixed_us may hold, so no reader would load it.
  calibration::MeasurementTable t;
  for (std::int64_t m = 1; m <= 64; m *= 2) {
    for (const std::int64_t n : {std::int64_t{1024}, std::int64_t{4096}}) {
      Measurement g;
      g.gpu = "h100";
      g.op = MeasuredOp::dense_gemm;
      g.m = m;
      g.n = n;
      g.k = 1024;
      g.latency_us = 2e6 * (1.0 + 0.001 * static_cast<double>(m));
      t.rows.push_back(g);
    }
  }
  const fs::path dir = temp_dir("refused");
  write(dir / "slow.csv", calibration::format_measurement_table(t));
  const auto fit =
      cli({"calibrate", "fit", (dir / "slow.csv").string(), "--gpu", "h100", "--out", (dir / "cal.toml").string()});
  CHECK(fit.code != 0);
  CHECK_THAT(fit.err, Contains("calibrate fit: the fitted GPU preset would be refused by every reader ("));
  CHECK_THAT(fit.err, Contains("fixed_us"));
  CHECK_THAT(fit.err, Contains("nothing written"));
  CHECK(!fs::exists(dir / "cal.toml"));
  fs::remove_all(dir);
}

TEST_CASE("ring-only all-reduce rows fit the ring's parameters while the NVLS bandwidth is held") {
  // Two GPUs: NCCL runs every size as a ring (LL up to ~2 MB, Simple beyond: its 2 x bus bandwidth / 2 beats
  // NVLS's 274 GB/s), so no row depends on the NVLS bandwidth. Before, that column made every standard
  // error unbounded and every parameter was held; now it alone is held and the ring's two are recovered.
  hardware::ClusterSpec truth = hardware::load_cluster_preset("hgx-h100");
  truth.collective_overhead_us = 9.0;
  truth.scale_up_link.efficiency = 0.7;
  std::vector<Measurement> rows;
  for (double bytes = 1024; bytes <= 1 << 28; bytes *= 8) {
    Measurement m;
    m.gpu = "h100";
    m.op = MeasuredOp::all_reduce;
    m.bytes = bytes;
    m.gpus = 2;
    m.gpus_per_node = 8;
    m.latency_us = experiments::price_collective_row_us(m, truth);
    rows.push_back(m);
  }
  // By hand, 256 MiB: 9 + 1 us launch + ring Simple 8.4 + 2 x 3.4 us + 256 MiB / (450 x 0.7) GB/s.
  CHECK(rows.back().latency_us == Approx(10.0 + 15.2 + 268435456.0 / 315.0 / 1e3));
  const hardware::ClusterSpec base = hardware::load_cluster_preset("hgx-h100");
  const auto fit = calibration::fit_collectives(base, rows, experiments::price_collective_row_us);
  REQUIRE(fit.params.size() == 5);
  CHECK_FALSE(fit.params[0].held);
  CHECK(fit.params[0].after == Approx(9.0).epsilon(1e-3));
  CHECK_FALSE(fit.params[1].held);
  CHECK(fit.params[1].after == Approx(0.7).epsilon(1e-3));
  CHECK(fit.params[2].name == "intra_node.nvls_gbps");
  CHECK(fit.params[2].held);
  CHECK(fit.cluster.scale_up_link.nvls_gbps == base.scale_up_link.nvls_gbps);
  REQUIRE(fit.warnings.size() == 1);
  CHECK_THAT(fit.warnings[0], Catch::StartsWith("intra_node.nvls_gbps: no row of the table depends on it"));
  CHECK(fit.groups[0].in_sample.mape < 1e-3);
}

TEST_CASE("a collective family the model cannot fit with the others is named, not silently averaged in") {
  // The truth prices every row but one family, all_to_all inside a node, measured 2.5 x slower (another
  // algorithm than the run models): fitted jointly it drags the shared scale-up numbers.
  hardware::ClusterSpec truth = hardware::load_cluster_preset("hgx-h100");
  truth.collective_overhead_us = 9.0;
  truth.scale_up_link.efficiency = 0.7;
  const auto table = [&](double slow) {
    std::vector<Measurement> rows;
    for (double bytes = 1024; bytes <= 1 << 30; bytes *= 8) {
      for (const auto& [op, gpus] : {std::pair{MeasuredOp::all_reduce, 8}, std::pair{MeasuredOp::all_to_all, 8},
                                     std::pair{MeasuredOp::send_recv, 8}, std::pair{MeasuredOp::all_to_all, 16}}) {
        Measurement m;
        m.gpu = "h100";
        m.op = op;
        m.bytes = bytes;
        m.gpus = gpus;
        m.gpus_per_node = 8;
        m.latency_us = experiments::price_collective_row_us(m, truth);
        if (op == MeasuredOp::all_to_all && gpus == 8) {
          m.latency_us *= slow;
        }
        rows.push_back(m);
      }
    }
    return rows;
  };
  const hardware::ClusterSpec base = hardware::load_cluster_preset("hgx-h100");
  const auto dragged = calibration::fit_collectives(base, table(2.5), experiments::price_collective_row_us);
  std::vector<std::string> named;
  for (const std::string& w : dragged.warnings) {
    if (w.find("drags the joint fit") != std::string::npos) {
      named.push_back(w);
    }
  }
  REQUIRE(named.size() == 1);
  CHECK_THAT(named[0], Catch::StartsWith("all_to_all within a node: the model does not fit it together"));
  // The same table measured as the model prices it: no family is named.
  const auto clean = calibration::fit_collectives(base, table(1.0), experiments::price_collective_row_us);
  for (const std::string& w : clean.warnings) {
    CHECK(w.find("drags the joint fit") == std::string::npos);
  }
}
