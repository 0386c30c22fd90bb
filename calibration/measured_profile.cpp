// SPDX-License-Identifier: Apache-2.0
#include "calibration/measured_profile.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "calibration/measured_work.hpp"
#include "core/error.hpp"
#include "hardware/roofline.hpp"

namespace epsim::calibration {
namespace {

// Whether a row has the model's own shape (a run's kernels of this family are of this shape).
bool model_shaped(const Measurement& m, const models::ModelSpec& model) {
  switch (m.op) {
    case MeasuredOp::expert_ffn:
      return m.hidden == model.hidden_size && m.intermediate == model.moe_intermediate_size &&
             m.dtype == model.weight_precision();
    case MeasuredOp::attention_prefill:
    case MeasuredOp::attention_decode:
      return model.attention == models::AttentionKind::gqa && m.head_dim == model.head_dim &&
             m.heads / m.kv_heads == model.num_heads / std::max<std::int64_t>(1, model.num_kv_heads);
    default:
      return true;
  }
}

}  // namespace

hardware::KernelCurves kernel_curves(std::span<const Measurement> rows, const hardware::GpuSpec& gpu,
                                     const models::ModelSpec& model, std::span<const MeasuredOp> ops,
                                     const std::string& source, std::vector<std::string>& warnings) {
  hardware::KernelCurves curves;
  for (const OpInfo& info : measured_ops()) {
    hardware::OpKind kind{};
    if (!kernel_kind(info.op, kind)) {
      continue;
    }
    const bool asked = std::find(ops.begin(), ops.end(), info.op) != ops.end();
    if (!ops.empty() && !asked) {
      continue;
    }
    std::vector<const Measurement*> all;
    std::vector<const Measurement*> shaped;
    for (const Measurement& m : rows) {
      if (m.op == info.op) {
        all.push_back(&m);
        if (model_shaped(m, model)) {
          shaped.push_back(&m);
        }
      }
    }
    if (all.empty()) {
      if (asked) {
        throw core::Error(fmt::format("{}: no {} rows to use as the cost of {}", source, info.name, info.name));
      }
      continue;
    }
    if (shaped.empty()) {
      warnings.push_back(fmt::format("{}: no {} row has {}'s shape: its curve comes from all {} rows", source,
                                     info.name, model.name, all.size()));
    }
    std::vector<std::pair<double, double>> points;
    const auto& use = shaped.empty() ? all : shaped;
    points.reserve(use.size());
    for (const Measurement* m : use) {
      points.emplace_back(hardware::roofline_cost(gpu, kernel_work(gpu, *m)).total_ns, m->latency_us * 1e3);
    }
    curves[static_cast<std::size_t>(kind)] = std::make_shared<hardware::MeasuredCurve>(std::move(points));
  }
  return curves;
}

std::shared_ptr<const hardware::MeasuredCurve> collective_curve(std::span<const Measurement> rows, MeasuredOp op,
                                                                const hardware::ClusterSpec& cluster,
                                                                const CollectivePricer& price) {
  std::vector<std::pair<double, double>> points;
  for (const Measurement& m : rows) {
    if (m.op == op && (op != MeasuredOp::all_reduce || !crosses_nodes(m))) {
      points.emplace_back(price(m, cluster) * 1e3, m.latency_us * 1e3);
    }
  }
  if (points.empty()) {
    return nullptr;
  }
  return std::make_shared<hardware::MeasuredCurve>(std::move(points));
}

}  // namespace epsim::calibration
