// SPDX-License-Identifier: Apache-2.0
#include "calibration/kernel_fit.hpp"

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/normal_distribution.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>

#include "calibration/fit_report.hpp"
#include "calibration/measured_work.hpp"
#include "core/error.hpp"
#include "core/random_streams.hpp"
#include "hardware/roofline.hpp"

using namespace epsim;
using calibration::MeasuredOp;
using calibration::Measurement;

namespace {

// A GPU whose kernels follow known parameters: the truth the fit must recover.
hardware::GpuSpec truth() {
  hardware::GpuSpec g = hardware::load_gpu_preset("h100");
  g.set_family_efficiency(hardware::OpKind::expert_ffn, {0.55, 0.72, 3.0, 9.0});
  g.set_family_efficiency(hardware::OpKind::dense_gemm, {0.78, 0.86, 2.5, 2.0});
  return g;
}

std::vector<Measurement> shapes() {
  std::vector<Measurement> rows;
  for (std::int64_t tokens = 1; tokens <= 16384; tokens *= 2) {
    for (const auto& [hidden, inter, experts, top_k] :
         {std::array<std::int64_t, 4>{4096, 14336, 8, 2}, {2048, 768, 128, 8}, {7168, 2048, 32, 8}}) {
      Measurement m;
      m.gpu = "h100";
      m.op = MeasuredOp::expert_ffn;
      m.tokens = tokens;
      m.experts = experts;
      m.top_k = top_k;
      m.hidden = hidden;
      m.intermediate = inter;
      rows.push_back(m);
    }
    for (const auto& [n, k] : {std::array<std::int64_t, 2>{4096, 4096}, {7168, 2048}, {2048, 7168}}) {
      Measurement m;
      m.gpu = "h100";
      m.op = MeasuredOp::dense_gemm;
      m.m = tokens;
      m.n = n;
      m.k = k;
      rows.push_back(m);
    }
  }
  return rows;
}

// The truth's latency of each row times lognormal noise of `sigma`, at speed `speed(gpu_id)`.
template <class Speed>
std::vector<Measurement> measured(std::vector<Measurement> rows, double sigma, Speed speed, std::uint32_t seed) {
  const hardware::GpuSpec g = truth();
  boost::random::mt19937_64 rng(seed);
  boost::random::normal_distribution<double> noise(0.0, sigma);
  for (Measurement& m : rows) {
    m.latency_us = hardware::roofline_cost(g, calibration::kernel_work(g, m), speed(m.gpu_id)).total_ns / 1e3 *
                   std::exp(noise(rng));
  }
  return rows;
}

const calibration::FamilyFit& family(const calibration::KernelFit& f, hardware::OpKind k) {
  for (const auto& ff : f.families) {
    if (ff.kind == k) {
      return ff;
    }
  }
  FAIL("no family");
  return f.families.front();
}

}  // namespace

TEST_CASE("the fit recovers the parameters of a table the model generated, with 2 % noise") {
  const auto rows = measured(
      shapes(), 0.02, [](int) { return 1.0; }, 7);
  const hardware::GpuSpec base = hardware::load_gpu_preset("h100");
  const calibration::KernelFit fit = calibration::fit_kernels(base, rows);
  REQUIRE(fit.families.size() == 2);
  const auto& e = family(fit, hardware::OpKind::expert_ffn);
  const auto& d = family(fit, hardware::OpKind::dense_gemm);
  // Each parameter within three of its own standard errors of the truth.
  const auto within = [](double fitted, double truth, double relative_se) {
    return std::abs(fitted / truth - 1.0) < 3.0 * relative_se;
  };
  CHECK(within(e.efficiency.compute, 0.55, e.standard_error[0]));
  CHECK(within(e.efficiency.memory, 0.72, e.standard_error[1]));
  CHECK(within(e.efficiency.knee, 3.0, e.standard_error[2]));
  CHECK(within(e.efficiency.fixed_us + base.kernel_launch_us, 13.0, e.standard_error[3]));
  CHECK(within(d.efficiency.compute, 0.78, d.standard_error[0]));
  CHECK(within(d.efficiency.memory, 0.86, d.standard_error[1]));
  CHECK(within(d.efficiency.knee, 2.5, d.standard_error[2]));
  CHECK(within(d.efficiency.fixed_us + base.kernel_launch_us, 6.0, d.standard_error[3]));
  for (const double se : e.standard_error) {
    CHECK(se < 0.1);
  }
  // Errors at the noise level once fitted (2 % lognormal: mean |e| ~ 1.6 %), far above it before.
  CHECK(e.in_sample.mape < 0.025);
  CHECK(e.held_out.mape < 0.03);
  CHECK(d.held_out.mape < 0.03);
  CHECK(e.held_out.rows == e.rows);
  CHECK(std::abs(e.held_out.bias) < 0.01);
  CHECK(e.before.mape > 0.1);
  CHECK(fit.gpu.eff(hardware::OpKind::expert_ffn, hardware::Precision::bf16).compute == e.efficiency.compute);
  CHECK(fit.speed_factors.empty());
}

TEST_CASE("with 0.2 % noise the fit lands within 1 % of every parameter") {
  const auto rows = measured(
      shapes(), 0.002, [](int) { return 1.0; }, 9);
  const calibration::KernelFit fit = calibration::fit_kernels(hardware::load_gpu_preset("h100"), rows);
  const hardware::Efficiency& e = family(fit, hardware::OpKind::expert_ffn).efficiency;
  const hardware::Efficiency& d = family(fit, hardware::OpKind::dense_gemm).efficiency;
  CHECK(e.compute == Approx(0.55).epsilon(0.01));
  CHECK(e.memory == Approx(0.72).epsilon(0.01));
  CHECK(e.knee == Approx(3.0).epsilon(0.03));
  CHECK(e.fixed_us == Approx(9.0).epsilon(0.03));
  CHECK(d.compute == Approx(0.78).epsilon(0.01));
  CHECK(d.memory == Approx(0.86).epsilon(0.01));
  CHECK(d.knee == Approx(2.5).epsilon(0.03));
  CHECK(d.fixed_us == Approx(2.0).epsilon(0.1));
}

// The run's own model of a cluster of `factors`: default variability dynamics (stress weighting on, no
// drift or jitter), the truth's efficiencies.
std::vector<Measurement> run_measured(std::vector<Measurement> rows, const std::vector<double>& factors,
                                      const hardware::StressConfig& stress, double sigma, std::uint32_t seed) {
  hardware::VariabilityConfig v;
  v.stress = stress;
  const hardware::RooflineCostModel run(truth(), factors, v, core::RandomStreams(1));
  boost::random::mt19937_64 rng(seed);
  boost::random::normal_distribution<double> noise(0.0, sigma);
  for (Measurement& m : rows) {
    m.latency_us = run.kernel_ns(m.gpu_id, calibration::kernel_work(truth(), m)) / 1e3 * std::exp(noise(rng));
  }
  return rows;
}

std::vector<Measurement> on_gpus(int gpus) {
  std::vector<Measurement> rows;
  for (int g = 0; g < gpus; ++g) {
    for (Measurement m : shapes()) {
      m.gpu_id = g;
      rows.push_back(m);
    }
  }
  return rows;
}

TEST_CASE("per-GPU speed factors round-trip: a fit of the run's own kernels recovers the factors the run applies") {
  const std::array<double, 4> raw{1.10, 0.90, 1.00, 0.95};
  const double geo = std::pow(raw[0] * raw[1] * raw[2] * raw[3], 0.25);
  std::vector<double> factors;
  for (const double r : raw) {
    factors.push_back(r / geo);
  }
  const hardware::StressConfig stress;  // the run's default: memory-bound kernels show 25 % of a deviation
  REQUIRE(stress.enabled);
  const auto table = run_measured(on_gpus(4), factors, stress, 0.002, 11);
  // The table holds kernels on both sides of the ridge, so the run's weighting matters to the fit: a
  // memory-bound GEMM on the slowest GPU runs at 1 + (s - 1) / 4, not at s.
  const hardware::GpuSpec g = truth();
  Measurement decode = shapes()[3];  // dense_gemm, m = 1
  REQUIRE(decode.op == MeasuredOp::dense_gemm);
  REQUIRE(hardware::intensity_over_ridge(g, calibration::kernel_work(g, decode)) < stress.x_low);
  const calibration::KernelFit fit = calibration::fit_kernels(hardware::load_gpu_preset("h100"), table);
  REQUIRE(fit.gpu_ids == std::vector<int>{0, 1, 2, 3});
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(fit.speed_factors[i] == Approx(factors[i]).epsilon(0.003));
  }
  // ... and a run given the fitted factors reproduces the table (the factors mean the same in both).
  hardware::VariabilityConfig v;
  const hardware::RooflineCostModel rerun(fit.gpu, fit.speed_factors, v, core::RandomStreams(1));
  double worst = 0.0;
  for (const Measurement& m : table) {
    const double us = rerun.kernel_ns(m.gpu_id, calibration::kernel_work(fit.gpu, m)) / 1e3;
    worst = std::max(worst, std::abs(us / m.latency_us - 1.0));
  }
  CHECK(worst < 0.01);

  // Without stress weighting (enabled = false) a factor stretches every kernel alike, in the fit too.
  hardware::StressConfig flat;
  flat.enabled = false;
  calibration::KernelFitOptions o;
  o.stress = flat;
  const calibration::KernelFit plain = calibration::fit_kernels(hardware::load_gpu_preset("h100"),
                                                                run_measured(on_gpus(4), factors, flat, 0.002, 13), o);
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(plain.speed_factors[i] == Approx(factors[i]).epsilon(0.003));
  }
}

TEST_CASE("speed and efficiency that trade off exactly refuse the fit, and an undetermined parameter is held") {
  // GPU 0 measured only expert FFNs, GPU 1 only dense GEMMs: GPU 0's speed and the expert efficiencies
  // explain the same rows.
  std::vector<Measurement> rows;
  for (Measurement m : shapes()) {
    m.gpu_id = m.op == MeasuredOp::expert_ffn ? 0 : 1;
    rows.push_back(m);
  }
  const auto table = measured(
      rows, 0.01, [](int) { return 1.0; }, 3);
  CHECK_THROWS_WITH(calibration::fit_kernels(hardware::load_gpu_preset("h100"), table),
                    Catch::StartsWith("calibrate fit: per-GPU speed and efficiency are not separable"));

  // Decode-sized GEMMs only: all memory-bound, the compute efficiency is not in the data.
  std::vector<Measurement> small;
  for (const Measurement& m : shapes()) {
    if (m.op == MeasuredOp::dense_gemm && m.m <= 8) {
      small.push_back(m);
    }
  }
  const auto fit =
      calibration::fit_kernels(hardware::load_gpu_preset("h100"), measured(
                                                                      small, 0.01, [](int) { return 1.0; }, 5));
  bool held_compute = false;
  for (const std::string& w : fit.warnings) {
    held_compute = held_compute || w.starts_with("dense_gemm.bf16.compute: the table does not determine it") ||
                   w.starts_with("dense_gemm.bf16.compute: poorly determined by the table");
  }
  CHECK(held_compute);
  CHECK(fit.families[0].held[0]);
  CHECK(fit.gpu.eff(hardware::OpKind::dense_gemm, hardware::Precision::bf16).compute ==
        hardware::load_gpu_preset("h100").eff(hardware::OpKind::dense_gemm, hardware::Precision::bf16).compute);
  CHECK(fit.families[0].in_sample.mape < 0.02);
}

namespace {

// Attention rows: prefill at head dims 64 / 128 / 256 (hidden 2048, as FlashAttention's benchmark), and
// decode over a KV cache from batch 1 (floor-bound) to 256.
std::vector<Measurement> attention_shapes() {
  std::vector<Measurement> rows;
  for (const std::int64_t head_dim : {64, 128, 256}) {
    for (std::int64_t seq = 512; seq <= 16384; seq *= 2) {
      Measurement m;
      m.gpu = "h100";
      m.op = MeasuredOp::attention_prefill;
      m.batch = 16384 / seq;
      m.q_tokens = seq;
      m.kv_tokens = seq;
      m.heads = 2048 / head_dim;
      m.kv_heads = m.heads;
      m.head_dim = head_dim;
      rows.push_back(m);
    }
  }
  for (std::int64_t batch = 1; batch <= 256; batch *= 2) {
    for (const std::int64_t kv : {1024, 4096}) {
      Measurement m;
      m.gpu = "h100";
      m.op = MeasuredOp::attention_decode;
      m.batch = batch;
      m.q_tokens = 1;
      m.kv_tokens = kv;
      m.heads = 32;
      m.kv_heads = 8;
      m.head_dim = 128;
      rows.push_back(m);
    }
  }
  return rows;
}

std::vector<Measurement> priced(const hardware::GpuSpec& g, std::vector<Measurement> rows, double sigma,
                                std::uint32_t seed) {
  boost::random::mt19937_64 rng(seed);
  boost::random::normal_distribution<double> noise(0.0, sigma);
  for (Measurement& m : rows) {
    m.latency_us = hardware::roofline_cost(g, calibration::kernel_work(g, m)).total_ns / 1e3 * std::exp(noise(rng));
  }
  return rows;
}

}  // namespace

TEST_CASE("the fit recovers attention's softmax head dim and decode's floor from tables that show them") {
  hardware::GpuSpec truth = hardware::load_gpu_preset("h100");
  truth.set_family_efficiency(hardware::OpKind::attention_prefill, {0.78, 0.8, 0.0, 0.0, 0.0, 40.0});
  truth.set_family_efficiency(hardware::OpKind::attention_decode, {0.5, 0.7, 0.0, 0.0, 15.0, 0.0});
  const auto rows = priced(truth, attention_shapes(), 0.002, 11);
  const calibration::KernelFit fit = calibration::fit_kernels(hardware::load_gpu_preset("h100"), rows);
  const hardware::Efficiency& p = family(fit, hardware::OpKind::attention_prefill).efficiency;
  const hardware::Efficiency& d = family(fit, hardware::OpKind::attention_decode).efficiency;
  CHECK(p.compute == Approx(0.78).epsilon(0.02));
  CHECK(p.softmax_head_dim == Approx(40.0).epsilon(0.05));
  CHECK(d.floor_us == Approx(15.0).epsilon(0.03));
  CHECK(d.memory == Approx(0.7).epsilon(0.02));
  CHECK(family(fit, hardware::OpKind::attention_decode).in_sample.mape < 0.01);
  // Without the terms (the base preset) the small head dims and the small batches are far off.
  CHECK(family(fit, hardware::OpKind::attention_decode).before.mape >
        20.0 * family(fit, hardware::OpKind::attention_decode).in_sample.mape);
}

TEST_CASE("a fit of FP8 rows sets the FP8 efficiencies only and stays under max_memory_efficiency") {
  // The truth's FP8 GEMMs move bytes at 0.95 of the HBM peak, above what an H100 reaches (0.8955).
  hardware::GpuSpec truth = hardware::load_gpu_preset("h100");
  truth.max_memory_efficiency = 1.0;
  truth.efficiency[0][static_cast<int>(hardware::Precision::fp8)] = {0.7, 0.95, 0.0, 0.0, 0.0, 0.0};
  std::vector<Measurement> rows;
  for (Measurement m : shapes()) {
    if (m.op == MeasuredOp::dense_gemm) {
      m.dtype = hardware::Precision::fp8;
      rows.push_back(m);
    }
  }
  const hardware::GpuSpec base = hardware::load_gpu_preset("h100");
  const calibration::KernelFit fit = calibration::fit_kernels(base, priced(truth, rows, 0.0, 1));
  REQUIRE(fit.families.size() == 1);
  CHECK(fit.families[0].precision == hardware::Precision::fp8);
  const hardware::Efficiency& fp8 = fit.gpu.eff(hardware::OpKind::dense_gemm, hardware::Precision::fp8);
  CHECK(fp8.memory <= base.max_memory_efficiency);
  CHECK(fp8.memory > 0.98 * base.max_memory_efficiency);
  bool warned = false;
  for (const std::string& w : fit.warnings) {
    warned = warned || w.starts_with("dense_gemm.fp8.memory: 0.89");
  }
  CHECK(warned);
  // BF16 and FP4 GEMMs keep the base preset's efficiencies.
  CHECK(fit.gpu.eff(hardware::OpKind::dense_gemm, hardware::Precision::bf16) ==
        base.eff(hardware::OpKind::dense_gemm, hardware::Precision::bf16));
  CHECK(fit.gpu.eff(hardware::OpKind::dense_gemm, hardware::Precision::fp4) ==
        base.eff(hardware::OpKind::dense_gemm, hardware::Precision::fp4));
  CHECK(fit.gpu.family_efficiency == base.family_efficiency);
}

namespace {

struct Mape {
  double sum = 0.0;
  int rows = 0;
  double value() const { return rows == 0 ? 0.0 : sum / rows; }
};

}  // namespace

TEST_CASE("h100-calibrated beats plain h100 on the public H100 tables it was not fitted to") {
  // Out of sample: other shapes, kernels and precisions than data/profiles/public-h100.csv, the fit's
  // table: DeepGEMM's grouped GEMMs, FlashAttention-2 and cuDNN attention, vLLM's Triton fused MoE (BF16
  // and FP8), cuBLAS FP16 GEMMs, the best-shape matmuls of ml-engineering's table (data/profiles/README.md).
  const std::filesystem::path dir = std::filesystem::path(EPSIM_TEST_DATA_DIR) / ".." / ".." / "data" / "profiles";
  const hardware::GpuSpec plain = hardware::load_gpu_preset("h100");
  const hardware::GpuSpec calibrated = hardware::load_gpu_preset("h100-calibrated");
  std::array<Mape, hardware::k_op_kinds> plain_mape{};
  std::array<Mape, hardware::k_op_kinds> calibrated_mape{};
  for (const char* table : {"public-h100-grouped-gemm.csv", "public-h100-attention-alt.csv",
                            "public-h100-fused-moe.csv", "public-h100-cublas-fp16.csv", "public-mamf-h100.csv"}) {
    for (const Measurement& m : calibration::read_measurement_table(dir / table).rows) {
      hardware::OpKind kind{};
      REQUIRE(calibration::kernel_kind(m.op, kind));
      const auto error = [&](const hardware::GpuSpec& g) {
        return std::abs(hardware::roofline_cost(g, calibration::kernel_work(g, m)).total_ns / 1e3 / m.latency_us - 1.0);
      };
      plain_mape[static_cast<std::size_t>(kind)].sum += error(plain);
      plain_mape[static_cast<std::size_t>(kind)].rows += 1;
      calibrated_mape[static_cast<std::size_t>(kind)].sum += error(calibrated);
      calibrated_mape[static_cast<std::size_t>(kind)].rows += 1;
    }
  }
  // Every family with held-out rows: dense GEMMs (40 rows), expert FFNs (33), prefill attention (58).
  for (const auto kind :
       {hardware::OpKind::dense_gemm, hardware::OpKind::expert_ffn, hardware::OpKind::attention_prefill}) {
    INFO(hardware::op_kind_name(kind));
    const auto k = static_cast<std::size_t>(kind);
    CHECK(plain_mape[k].rows > 30);
    CHECK(calibrated_mape[k].value() < plain_mape[k].value());
  }
  // The figures docs/calibration.md reports.
  CHECK(plain_mape[0].value() == Approx(0.249).margin(0.0005));
  CHECK(calibrated_mape[0].value() == Approx(0.230).margin(0.0005));
  CHECK(plain_mape[1].value() == Approx(0.260).margin(0.0005));
  CHECK(calibrated_mape[1].value() == Approx(0.1885).margin(0.0005));
  CHECK(plain_mape[2].value() == Approx(0.330).margin(0.0005));
  CHECK(calibrated_mape[2].value() == Approx(0.294).margin(0.0005));
}

TEST_CASE("the fit names the library its rows ran, and check notes rows of another library") {
  hardware::GpuSpec truth = hardware::load_gpu_preset("h100");
  truth.set_family_efficiency(hardware::OpKind::attention_prefill, {0.7, 0.8, 0.0, 0.0, 0.0, 0.0});
  auto rows = priced(truth, attention_shapes(), 0.01, 4);
  std::erase_if(rows, [](const Measurement& m) { return m.op != MeasuredOp::attention_prefill; });
  for (Measurement& m : rows) {
    m.kernel = "flash_attn_3";
  }
  const calibration::KernelFit fit = calibration::fit_kernels(hardware::load_gpu_preset("h100"), rows);
  CHECK(fit.gpu.eff(hardware::OpKind::attention_prefill, hardware::Precision::bf16).library ==
        hardware::KernelLibrary::flash_attn_3);
  CHECK_THAT(calibration::kernel_fit_report(fit), Catch::Contains("| attention_prefill | bf16 | flash_attn_3 | 18 |"));
  // Rows of FlashAttention-2 priced on it: one note; rows of the same library or none: nothing.
  auto fa2 = rows;
  for (std::size_t i = 0; i < 5; ++i) {
    fa2[i].kernel = "flash_attn_2";
  }
  CHECK(calibration::library_notes(fit.gpu, fa2) ==
        "- note: 5 flash_attn_2 rows of attention_prefill bf16 priced with the efficiencies of flash_attn_3\n");
  CHECK(calibration::library_notes(fit.gpu, rows).empty());
  CHECK(calibration::library_notes(hardware::load_gpu_preset("h100"), fa2).empty());
  // Mixed libraries in one (family, precision): their mix, said so.
  const calibration::KernelFit mixed = calibration::fit_kernels(hardware::load_gpu_preset("h100"), fa2);
  CHECK(mixed.gpu.eff(hardware::OpKind::attention_prefill, hardware::Precision::bf16).library ==
        hardware::KernelLibrary::any);
  bool warned = false;
  for (const std::string& w : mixed.warnings) {
    warned = warned || w.starts_with(
                           "attention_prefill bf16: rows of several kernel libraries (flash_attn_2, "
                           "flash_attn_3)");
  }
  CHECK(warned);
}
