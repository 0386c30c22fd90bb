// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>
#include <cmath>

#include "core/error.hpp"
#include "hardware/collective_model.hpp"
#include "hardware/measured_cost_model.hpp"

using namespace epsim;

TEST_CASE("a measured curve interpolates measured / modelled in log-log and holds its end ratios") {
  const hardware::MeasuredCurve c({{1000.0, 1000.0}, {100.0, 200.0}});
  CHECK(c.points() == 2);
  CHECK(c.ratio(100.0) == Approx(2.0));
  CHECK(c.ratio(1000.0) == Approx(1.0));
  // Half way in log time: half way in log ratio, sqrt(2).
  CHECK(c.ratio(std::sqrt(100.0 * 1000.0)) == Approx(std::sqrt(2.0)));
  CHECK(c.ratio(10.0) == Approx(2.0));  // below the table: the first point's ratio
  CHECK(c.ratio(1e6) == Approx(1.0));   // above: the last point's
  CHECK(c.ratio(0.0) == Approx(2.0));
  CHECK(c.first_ns() == Approx(100.0));
  CHECK(c.last_ns() == Approx(1000.0));
  // Points within 1 % of modelled time are one: their log ratios averaged (2 and 3 -> sqrt(6)).
  const hardware::MeasuredCurve merged({{100.0, 200.0}, {100.5, 301.5}, {400.0, 400.0}});
  CHECK(merged.points() == 2);
  CHECK(merged.ratio(50.0) == Approx(std::sqrt(6.0)));
  CHECK(hardware::MeasuredCurve().ratio(5.0) == 1.0);
  CHECK_THROWS_AS(hardware::MeasuredCurve({{-1.0, 2.0}}), core::Error);
}

TEST_CASE("a measured cost model corrects its families on the measured GPU model only") {
  const hardware::GpuSpec h100 = hardware::load_gpu_preset("h100");
  auto roofline = std::make_unique<hardware::RooflineCostModel>(h100, std::vector<double>{1.0, 0.5, 1.0});
  roofline->set_gpu_model(2, 1, hardware::load_gpu_preset("h200"));
  hardware::KernelCurves curves;
  curves[static_cast<std::size_t>(hardware::OpKind::expert_ffn)] =
      std::make_shared<hardware::MeasuredCurve>(std::vector<std::pair<double, double>>{{1e3, 2e3}, {1e6, 2e6}});
  const hardware::RooflineCostModel& plain = *roofline;
  hardware::KernelWork expert;
  expert.kind = hardware::OpKind::expert_ffn;
  expert.flops = 1e12;
  expert.bytes = 1e9;
  hardware::KernelWork gemm = expert;
  gemm.kind = hardware::OpKind::dense_gemm;
  const double expert_0 = plain.kernel_ns(0, expert);
  const double expert_1 = plain.kernel_ns(1, expert);
  const double expert_2 = plain.kernel_ns(2, expert);
  const double gemm_0 = plain.kernel_ns(0, gemm);
  const hardware::MeasuredCostModel m(std::move(roofline), curves, h100.name);
  CHECK(m.kernel_ns(0, expert) == Approx(2.0 * expert_0));
  CHECK(m.kernel_ns(1, expert) == Approx(2.0 * expert_1));  // the slow GPU keeps its factor, corrected too
  CHECK(m.kernel_ns(2, expert) == Approx(expert_2));        // an H200: not what was measured
  CHECK(m.kernel_ns(0, gemm) == Approx(gemm_0));            // no dense_gemm curve
  CHECK(&hardware::roofline_of(m) == &m.roofline());
}

TEST_CASE("a measured exchange curve scales every EP exchange and all-to-all, not the all-gathers") {
  const hardware::Topology topo(2, 2, hardware::LinkSpec{100.0, 1.0}, hardware::LinkSpec{10.0, 2.0});
  hardware::CollectiveConfig plain_cfg;
  plain_cfg.model = hardware::CollectiveModelKind::ports;
  hardware::CollectiveConfig measured_cfg = plain_cfg;
  measured_cfg.exchange_curve =
      std::make_shared<hardware::MeasuredCurve>(std::vector<std::pair<double, double>>{{1e3, 3e3}, {1e7, 3e7}});
  const auto plain = hardware::make_collective_model(plain_cfg, topo, nullptr, 0);
  const auto measured = hardware::make_collective_model(measured_cfg, topo, nullptr, 0);
  const Eigen::ArrayXd share = Eigen::ArrayXd::Constant(4, 0.25);
  const Eigen::ArrayXd pairs = Eigen::ArrayXd::Constant(4, 100.0);
  const hardware::EpTraffic t{&share, &pairs, nullptr, nullptr, nullptr};
  CHECK(measured->ep_exchange(t, 1000.0).time_ns == Approx(3.0 * plain->ep_exchange(t, 1000.0).time_ns));
  CHECK(measured->all_to_all_separable(share, pairs, 1000.0).time_ns ==
        Approx(3.0 * plain->all_to_all_separable(share, pairs, 1000.0).time_ns));
  const Eigen::ArrayXd bytes = Eigen::ArrayXd::Constant(4, 1e6);
  CHECK(measured->all_gather(bytes).time_ns == Approx(plain->all_gather(bytes).time_ns));
}

TEST_CASE("a measured all-reduce curve scales every tensor-parallel all-reduce") {
  const hardware::Topology topo(1, 8, hardware::LinkSpec{400.0, 3.0, 1.0, 250.0}, hardware::LinkSpec{50.0, 2.0});
  hardware::CollectiveConfig cfg;
  cfg.model = hardware::CollectiveModelKind::ports;
  const auto plain = hardware::make_collective_model(cfg, topo, nullptr, 0);
  cfg.all_reduce_curve =
      std::make_shared<hardware::MeasuredCurve>(std::vector<std::pair<double, double>>{{1e3, 2e3}, {1e7, 2e7}});
  const auto measured = hardware::make_collective_model(cfg, topo, nullptr, 0);
  // By hand (NCCL's tuning model, nccl_tuning.hpp): 64 MB over 8 GPUs, NVLS 25 us + 64e6 / 250 = 281 us
  // beats ring Simple 8.4 + 14 x 3.4 us + 64e6 / (400 x 8/14) = 336 us; after the 3 us alpha.
  CHECK(plain->tp_all_reduce_ns(topo.intra(), 8, 64e6) == Approx(3000.0 + 25000.0 + 64e6 / 250.0));
  CHECK(measured->tp_all_reduce_ns(topo.intra(), 8, 64e6) == Approx(2.0 * (3000.0 + 25000.0 + 64e6 / 250.0)));
  // The exchanges are not corrected without an exchange curve.
  const Eigen::ArrayXd share = Eigen::ArrayXd::Constant(8, 0.125);
  const Eigen::ArrayXd pairs = Eigen::ArrayXd::Constant(8, 100.0);
  CHECK(measured->all_to_all_separable(share, pairs, 1000.0).time_ns ==
        Approx(plain->all_to_all_separable(share, pairs, 1000.0).time_ns));
}
