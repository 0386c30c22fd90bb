// SPDX-License-Identifier: Apache-2.0
#include "calibration/measured_work.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "models/layer_work.hpp"

namespace epsim::calibration {
namespace {

double d(std::int64_t v) {
  return static_cast<double>(v);
}

std::int64_t element_bytes(hardware::Precision p) {
  return p == hardware::Precision::fp8 ? 1 : 2;
}

}  // namespace

double expected_active_experts(double experts, double top_k, double tokens) {
  if (experts <= 0.0 || tokens <= 0.0 || top_k <= 0.0) {
    return 0.0;
  }
  const double miss = std::max(0.0, 1.0 - top_k / experts);  // one token does not pick a given expert
  return experts * (1.0 - std::pow(miss, tokens));
}

double active_experts_of(const Measurement& m) {
  if (m.active_experts > 0) {
    return d(m.active_experts);
  }
  return std::max(1.0, expected_active_experts(d(m.experts), d(m.top_k), d(m.tokens)));
}

double padded_expert_tokens(const hardware::GpuSpec& gpu, const Measurement& m) {
  const std::int64_t pairs = m.tokens * m.top_k;
  const double active = active_experts_of(m);
  // Each active expert's share of the pairs, padded to the tile the kernel would pick.
  const std::int64_t tile = gpu.moe_tile(pairs, m.experts);
  const double per_expert = std::ceil(d(pairs) / active);
  return active * d(hardware::pad_to_tile(static_cast<std::int64_t>(per_expert), tile));
}

hardware::KernelWork kernel_work(const hardware::GpuSpec& gpu, const Measurement& m) {
  models::ModelSpec spec;
  // A measured FP4 GEMM is taken as NVFP4 (the format Blackwell's FP4 tensor cores run).
  spec.weight_format = m.dtype == hardware::Precision::fp8   ? models::WeightFormat::fp8
                       : m.dtype == hardware::Precision::fp4 ? models::WeightFormat::nvfp4
                                                             : models::WeightFormat::bf16;
  spec.expert_format = spec.weight_format;
  spec.activation_bytes = 2;
  switch (m.op) {
    case MeasuredOp::expert_ffn: {
      spec.hidden_size = m.hidden;
      spec.moe_intermediate_size = m.intermediate;
      return models::expert_ffn_work(spec, padded_expert_tokens(gpu, m), d(m.tokens * m.top_k), active_experts_of(m));
    }
    case MeasuredOp::dense_gemm: {
      hardware::KernelWork w;
      w.kind = hardware::OpKind::dense_gemm;
      w.precision = m.dtype;
      w.tokens = d(m.m);
      // A grouped call: `groups` GEMMs, each its own weight, their rows stacked (tiles of every group).
      const double g = d(m.groups);
      w.flops = 2.0 * g * d(m.m) * d(m.n) * d(m.k);
      w.bytes = g * (d(m.n) * d(m.k) * spec.weight_bytes() + d(m.m) * d(m.k + m.n) * d(spec.activation_bytes));
      w.gemm_m = g * d(m.m);
      w.gemm_n = d(m.n);
      return w;
    }
    case MeasuredOp::attention_prefill:
    case MeasuredOp::attention_decode: {
      spec.attention = models::AttentionKind::gqa;
      spec.num_heads = m.heads;
      spec.num_kv_heads = m.kv_heads;
      spec.head_dim = m.head_dim;
      spec.kv_cache_bytes = element_bytes(m.dtype);
      const double context = d(m.kv_tokens - m.q_tokens);
      models::AttentionBatch b;
      b.tokens = d(m.batch) * d(m.q_tokens);
      b.score_pairs =
          d(m.batch) * (m.causal ? models::causal_pairs(context, d(m.q_tokens)) : d(m.q_tokens) * d(m.kv_tokens));
      b.kv_read_tokens = d(m.batch) * context;
      return models::attention_core_work(spec, b,
                                         m.op == MeasuredOp::attention_prefill ? hardware::OpKind::attention_prefill
                                                                               : hardware::OpKind::attention_decode);
    }
    default:
      throw core::Error(std::string("kernel_work: ") + std::string(op_name(m.op)) + " is a collective, not a kernel");
  }
}

std::string_view regime_name(Regime r) {
  switch (r) {
    case Regime::memory:
      return "memory";
    case Regime::knee:
      return "knee";
    case Regime::compute:
      return "compute";
    case Regime::latency:
      return "latency";
    case Regime::bandwidth:
      return "bandwidth";
  }
  return "?";
}

Regime kernel_regime(const hardware::GpuSpec& gpu, const Measurement& m) {
  const double r = hardware::intensity_over_ridge(gpu, kernel_work(gpu, m));
  return r < 0.5 ? Regime::memory : r > 2.0 ? Regime::compute : Regime::knee;
}

}  // namespace epsim::calibration
