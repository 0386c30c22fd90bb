#include "calibration/kernel_fit.hpp"

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/normal_distribution.hpp>
#include <catch2/catch.hpp>
#include <cmath>

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
  g.efficiency[static_cast<int>(hardware::OpKind::expert_ffn)] = {0.55, 0.72, 3.0, 9.0};
  g.efficiency[static_cast<int>(hardware::OpKind::dense_gemm)] = {0.78, 0.86, 2.5, 2.0};
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
  CHECK(fit.gpu.eff(hardware::OpKind::expert_ffn).compute == e.efficiency.compute);
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
    held_compute = held_compute || w.starts_with("dense_gemm.compute: the table does not determine it") ||
                   w.starts_with("dense_gemm.compute: poorly determined by the table");
  }
  CHECK(held_compute);
  CHECK(fit.families[0].held[0]);
  CHECK(fit.gpu.eff(hardware::OpKind::dense_gemm).compute ==
        hardware::load_gpu_preset("h100").eff(hardware::OpKind::dense_gemm).compute);
  CHECK(fit.families[0].in_sample.mape < 0.02);
}
