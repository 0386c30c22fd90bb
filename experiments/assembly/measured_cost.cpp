// SPDX-License-Identifier: Apache-2.0
#include "experiments/assembly/measured_cost.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "calibration/measured_profile.hpp"
#include "core/error.hpp"
#include "experiments/assembly/experiment_config.hpp"
#include "experiments/assembly/row_pricing.hpp"
#include "hardware/measured_cost_model.hpp"

namespace epsim::experiments {

MeasuredCostConfig parse_measured_cost_section(core::ParamTable& root) {
  auto t = root.table("calibration", "measured tables as the cost model (docs/calibration.md)");
  MeasuredCostConfig c;
  c.table = t.string("table", "", "a measurement table whose latencies price kernels (and EP exchanges)");
  c.label = t.string("label", "", "the table's rows of this gpu label (default: its only label)");
  for (const std::string& name : t.string_list("ops",
                                               "what the table prices: kernel ops and all_to_all "
                                               "(default: everything it has rows of)")) {
    calibration::MeasuredOp op{};
    if (!calibration::parse_op(name, op) || op == calibration::MeasuredOp::send_recv) {
      t.fail("ops", fmt::format("unknown \"{}\": expected expert_ffn, dense_gemm, attention_prefill, "
                                "attention_decode, all_to_all or all_reduce",
                                name));
    }
    c.ops.push_back(op);
  }
  if (c.table.empty() && (!c.label.empty() || !c.ops.empty())) {
    t.fail("table", "label and ops need a table");
  }
  t.finish();
  return c;
}

void build_measured_cost(ExperimentConfig& cfg) {
  MeasuredCostConfig& m = cfg.measured;
  if (m.table.empty()) {
    return;
  }
  const calibration::MeasurementTable table = calibration::read_measurement_table(m.table);
  const std::vector<calibration::Measurement> rows =
      calibration::rows_of_label(table, m.label, m.table, "calibration.label");
  std::vector<calibration::MeasuredOp> kernels;  // empty with no ops: every family the table has
  std::vector<calibration::MeasuredOp> collectives{calibration::MeasuredOp::all_to_all,
                                                   calibration::MeasuredOp::all_reduce};
  if (!m.ops.empty()) {
    collectives.clear();
    for (const calibration::MeasuredOp op : m.ops) {
      (calibration::op_info(op).collective ? collectives : kernels).push_back(op);
    }
  }
  if (m.ops.empty() || !kernels.empty()) {
    m.kernel_curves = calibration::kernel_curves(rows, cfg.gpu, cfg.model, kernels, m.table, cfg.warnings);
  }
  for (const calibration::MeasuredOp op : collectives) {
    auto curve = calibration::collective_curve(rows, op, cfg.cluster, price_collective_row_us);
    if (!curve && !m.ops.empty()) {
      throw core::Error(
          fmt::format("{}: no {} rows{} to use as the cost of {}", m.table, calibration::op_name(op),
                      op == calibration::MeasuredOp::all_reduce ? " inside a node" : "",
                      op == calibration::MeasuredOp::all_reduce ? "tensor-parallel all-reduces" : "EP exchanges"));
    }
    (op == calibration::MeasuredOp::all_reduce ? cfg.collectives.all_reduce_curve : cfg.collectives.exchange_curve) =
        curve;
  }
}

std::unique_ptr<hardware::CostModel> with_measured_cost(const ExperimentConfig& cfg,
                                                        std::unique_ptr<hardware::RooflineCostModel> roofline) {
  const bool any = std::any_of(cfg.measured.kernel_curves.begin(), cfg.measured.kernel_curves.end(),
                               [](const auto& c) { return c != nullptr; });
  if (!any) {
    return roofline;
  }
  return std::make_unique<hardware::MeasuredCostModel>(std::move(roofline), cfg.measured.kernel_curves, cfg.gpu.name);
}

}  // namespace epsim::experiments
