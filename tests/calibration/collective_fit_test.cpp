// SPDX-License-Identifier: Apache-2.0
// calibrate fit's collective fit holds the parameters its rows cannot determine and fits the rest
// (calibration/collective_fit.hpp, least_squares.hpp's undetermined_columns).
#include <Eigen/Core>
#include <catch2/catch.hpp>
#include <cmath>

#include "calibration/collective_fit.hpp"
#include "calibration/least_squares.hpp"
#include "hardware/cluster_spec.hpp"

using namespace epsim;
using calibration::MeasuredOp;
using calibration::Measurement;
using Catch::Matchers::Contains;

TEST_CASE("undetermined_columns: zero columns are unused, a combination of others is dependent") {
  Eigen::MatrixXd j(4, 4);
  // Column 1 is zero, column 3 = column 0 + column 2.
  j << 1.0, 0.0, 0.0, 1.0,  //
      0.0, 0.0, 1.0, 1.0,   //
      1.0, 0.0, 1.0, 2.0,   //
      2.0, 0.0, 0.5, 2.5;
  const calibration::UndeterminedColumns u = calibration::undetermined_columns(j);
  REQUIRE(u.unused.size() == 1);
  CHECK(u.unused[0] == 1);
  CHECK(u.dependent.size() == 1);
  Eigen::MatrixXd full(3, 2);
  full << 1.0, 0.0, 0.0, 1.0, 1.0, 1.0;
  const calibration::UndeterminedColumns none = calibration::undetermined_columns(full);
  CHECK(none.unused.empty());
  CHECK(none.dependent.empty());
}

TEST_CASE("a parameter no row depends on is held without poisoning the fitted ones") {
  // A pricer whose time is the overhead plus a fixed 2 us per MB: no row moves with the scale-up efficiency
  // (or NVLS bandwidth), as NCCL's LL protocol at its bandwidth cap. The rows: overhead 9 us.
  const auto price = [](const Measurement& row, const hardware::ClusterSpec& c) {
    return c.collective_overhead_us + 2.0 * row.bytes / 1e6;
  };
  std::vector<Measurement> rows;
  for (double bytes = 1024; bytes <= 1 << 20; bytes *= 4) {
    Measurement m;
    m.gpu = "h100";
    m.op = MeasuredOp::all_reduce;
    m.bytes = bytes;
    m.gpus = 8;
    m.gpus_per_node = 8;
    m.latency_us = 9.0 + 2.0 * bytes / 1e6;
    rows.push_back(m);
  }
  const hardware::ClusterSpec base = hardware::load_cluster_preset("hgx-h100");
  const calibration::CollectiveFit fit = calibration::fit_collectives(base, rows, price);
  REQUIRE(fit.params.size() == 5);
  // The overhead is fitted exactly; efficiency and NVLS bandwidth are held at the base's, with the reason.
  CHECK(fit.params[0].name == "collective_overhead_us");
  CHECK_FALSE(fit.params[0].held);
  CHECK(fit.params[0].after == Approx(9.0).epsilon(1e-6));
  CHECK(fit.params[1].held);
  CHECK(fit.params[1].after == base.scale_up_link.efficiency);
  CHECK(fit.params[2].name == "intra_node.nvls_gbps");
  CHECK(fit.params[2].held);
  CHECK(fit.cluster.collective_overhead_us == Approx(9.0).epsilon(1e-6));
  std::size_t unused = 0;
  for (const std::string& w : fit.warnings) {
    CHECK_THAT(w, !Contains("poorly determined"));
    unused += w.find("no row of the table depends on it") != std::string::npos ? 1 : 0;
  }
  CHECK(unused == 2);
}

TEST_CASE("parameters the rows move together: one is fitted, the other held, the intercept exact") {
  // Every row's time has overhead + 10 x network latency as its intercept: the rows cannot tell the two
  // apart (and none moves with the NVLS bandwidth); the two efficiencies are determined.
  const auto price = [](const Measurement& row, const hardware::ClusterSpec& c) {
    const bool across = row.gpus > row.gpus_per_node;
    const double eff = across ? c.nic_link.efficiency : c.scale_up_link.efficiency;
    return c.collective_overhead_us + 10.0 * c.nic_link.latency_us + row.bytes / (1e3 * eff);
  };
  hardware::ClusterSpec base = hardware::load_cluster_preset("hgx-h100");
  base.nodes = 2;
  std::vector<Measurement> rows;
  for (double bytes = 1e3; bytes <= 1e8; bytes *= 10) {
    for (const int gpus : {8, 16}) {
      Measurement m;
      m.gpu = "h100";
      m.op = gpus == 8 ? MeasuredOp::all_reduce : MeasuredOp::all_to_all;
      m.bytes = bytes;
      m.gpus = gpus;
      m.gpus_per_node = 8;
      m.latency_us = 5.0 + 10.0 * 1.0 + bytes / (1e3 * (gpus == 8 ? 0.7 : 0.5));
      rows.push_back(m);
    }
  }
  const calibration::CollectiveFit fit = calibration::fit_collectives(base, rows, price);
  REQUIRE(fit.params.size() == 5);
  CHECK(fit.params[1].after == Approx(0.7).epsilon(1e-4));
  CHECK(fit.params[4].after == Approx(0.5).epsilon(1e-4));
  CHECK(fit.params[2].held);                        // NVLS: no row depends on it
  CHECK(fit.params[0].held != fit.params[3].held);  // overhead or latency: one of the two
  const double intercept = fit.cluster.collective_overhead_us + 10.0 * fit.cluster.nic_link.latency_us;
  CHECK(intercept == Approx(15.0).epsilon(1e-4));
  std::size_t dependent = 0;
  for (const std::string& w : fit.warnings) {
    dependent += w.find("cannot tell it apart") != std::string::npos ? 1 : 0;
  }
  CHECK(dependent == 1);
}
