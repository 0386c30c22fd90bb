// SPDX-License-Identifier: Apache-2.0
#pragma once
// A measured kernel's shape as the work the cost model prices (hardware::KernelWork), under the same
// conventions as a run's layers (models/layer_work.hpp), so a fit's efficiencies mean in a run what they
// meant on the table. Shapes -> work:
// - expert_ffn: `tokens` tokens each go to `top_k` of the GPU's `experts` experts (as vLLM's fused-MoE
//   benchmark); `active_experts` of them receive a token (given, else the expectation under uniform
//   routing); each active expert's tokens are padded to the GPU's grouped-GEMM tile; SwiGLU FFN.
// - dense_gemm: (m x k) activations by a (k x n) weight; `groups` of them in one grouped call.
// - attention: `batch` sequences of `q_tokens` new tokens attending over `kv_tokens` keys, causally
//   unless the row says `causal` 0 (then every query sees every key).
#include "calibration/measurement_table.hpp"
#include "hardware/gpu_spec.hpp"
#include "hardware/roofline.hpp"

namespace epsim::calibration {

/// Experts of `experts` that receive at least one of `tokens` tokens each routed to `top_k` distinct
/// experts uniformly at random: experts x (1 - (1 - top_k / experts)^tokens).
double expected_active_experts(double experts, double top_k, double tokens);

/// The row's active experts: given, else the expectation (at least 1).
double active_experts_of(const Measurement& m);

/// An expert_ffn row's tokens after padding: each active expert's share of the tokens x top_k pairs,
/// rounded up, padded to `gpu`'s grouped-GEMM tile (the FLOPs the kernel does).
double padded_expert_tokens(const hardware::GpuSpec& gpu, const Measurement& m);

/// The work of a kernel row on `gpu` (its tile rule pads the expert FFN); throws core::Error for a
/// collective row.
hardware::KernelWork kernel_work(const hardware::GpuSpec& gpu, const Measurement& m);

/// Where a kernel sits on its GPU's roofline, and a collective between its fixed cost and its bandwidth.
enum class Regime : std::uint8_t { memory, knee, compute, latency, bandwidth };
std::string_view regime_name(Regime r);
/// Memory-bound (intensity under half the ridge), compute-bound (over twice), else the knee.
Regime kernel_regime(const hardware::GpuSpec& gpu, const Measurement& m);

}  // namespace epsim::calibration
