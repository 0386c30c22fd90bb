// SPDX-License-Identifier: Apache-2.0
#include "hardware/ep_comm.hpp"

#include <array>
#include <cmath>

namespace epsim::hardware {

namespace {
constexpr std::array<core::Choice<DispatchAlgorithm>, 4> k_algorithms{
    {{"nccl", DispatchAlgorithm::nccl},
     {"deepep_normal", DispatchAlgorithm::deepep_normal},
     {"deepep_low_latency", DispatchAlgorithm::deepep_low_latency},
     {"deepep_auto", DispatchAlgorithm::deepep_auto}}};
constexpr std::array<core::Choice<WireDtype>, 2> k_dtypes{{{"bf16", WireDtype::bf16}, {"fp8", WireDtype::fp8}}};
constexpr std::array<core::Choice<OverlapMode>, 2> k_overlaps{
    {{"none", OverlapMode::none}, {"two_batch", OverlapMode::two_batch}}};
constexpr core::RealBounds k_share{0.0, 1.0, true};  // (0, 1]
constexpr core::RealBounds k_at_least_one{1.0, 100.0, false};

// The send and receive kernels of one low-latency dispatch / combine, measured alone on H100 at 128
// tokens per GPU, EP72 (DeepEP unit tests charted in the LMSYS large-scale EP blog, 2025-05-05, decode
// breakdown: 0.060 and 0.077 ms per layer for the two micro-batches; data/profiles/public-breakdown.csv).
// Held constant: at decode batch sizes the kernels wait on latency, not bytes.
void set_low_latency_kernel_time(EpCommConfig& c) {
  c.compute_dispatch_us = 30.0;
  c.compute_combine_us = 38.5;
}

// The normal kernels' link shares, least-squares fits (in log space) to DeepEP's tables on H800 + CX7
// (comm_fits.toml; docs/model.md):
// - NVLink 0.88: intranode EP8 dispatch 153 and combine 158 GB/s;
// - RDMA 0.95: the internode kernels since 2025-04-22 (IBGDA, a queue pair per channel: EP32 58/57, EP64
//   51/50 GB/s). The kernels before (IBRC: EP32 44/47, EP64 46/45 GB/s) fit 0.80; the SGLang example sets it.
// Beside the other half's GEMMs they are slower than alone: 1.28x in DeepSeek's profile (H800, EP32
// prefill, two micro-batches of 8,192 tokens, balanced routing, the IBRC kernels of its day).
void set_normal_kernel_fit(EpCommConfig& c) {
  c.nvlink_efficiency = 0.88;
  c.rdma_efficiency = 0.95;
  c.overlap_exchange_factor = 1.28;
}
}  // namespace

EpCommConfig algorithm_defaults(DispatchAlgorithm algorithm) {
  // Fitted to DeepEP's published tables (hardware/presets/comm_fits.toml lists every point and
  // tests/serving/ep_comm_test.cpp checks the fit); DeepEP ships FP8 dispatch and BF16 combine.
  EpCommConfig c;
  c.algorithm = algorithm;
  switch (algorithm) {
    case DispatchAlgorithm::nccl:
      break;
    case DispatchAlgorithm::deepep_normal:
      c.dispatch_dtype = WireDtype::fp8;
      // Not fitted: DeepEP publishes normal mode at 4,096 tokens, where the startup hides in the
      // bandwidth term. Normal mode exchanges counts (a notify kernel and a CPU-GPU sync) before the data,
      // tens of us; 40 is an assumption until measured (docs/model.md).
      c.alpha_us = 40.0;
      // No SM limit by default: DeepEP's 24 SMs reach the link's rate on H800 (153-158 GB/s of ~160 over
      // NVLink); what they can push over NVLink 5 is unpublished. sm_gbps sets one when measured.
      c.sm_gbps = 0.0;
      set_normal_kernel_fit(c);
      break;
    case DispatchAlgorithm::deepep_auto:
      c.dispatch_dtype = WireDtype::fp8;
      set_normal_kernel_fit(c);
      set_low_latency_kernel_time(c);
      break;
    case DispatchAlgorithm::deepep_low_latency:
      c.dispatch_dtype = WireDtype::fp8;
      c.alpha_us = 20.0;
      c.message_ns = 15.0;
      set_low_latency_kernel_time(c);
      break;
  }
  return c;
}

double wire_bytes_per_token(WireDtype dtype, std::int64_t hidden, int fp8_block) {
  const auto h = static_cast<double>(hidden);
  if (dtype == WireDtype::bf16) {
    return 2.0 * h;
  }
  return h + 4.0 * std::ceil(h / static_cast<double>(fp8_block));
}

const char* algorithm_name(DispatchAlgorithm algorithm) {
  for (const auto& c : k_algorithms) {
    if (c.value == algorithm) {
      return c.name.data();
    }
  }
  return "?";
}

double overlap_compute_factor(const EpCommConfig& comm, int sm_count) {
  if (comm.overlap != OverlapMode::two_batch || !comm.deduplicates() || sm_count <= comm.comm_sms) {
    return 1.0;
  }
  return static_cast<double>(sm_count) / static_cast<double>(sm_count - comm.comm_sms);
}

EpCommConfig parse_ep_comm(core::ParamTable& t, const EpCommConfig* defaults) {
  const DispatchAlgorithm base_algorithm = defaults != nullptr ? defaults->algorithm : DispatchAlgorithm::nccl;
  const DispatchAlgorithm algorithm = t.choice<DispatchAlgorithm>(
      "algorithm", base_algorithm,
      "how dispatch/combine move tokens: nccl (all-to-all of token-expert pairs), deepep_normal (once per node, "
      "then NVLink), deepep_low_latency (one RDMA message per token-expert pair), deepep_auto (normal for steps "
      "that prefill, low latency for decode-only steps)",
      k_algorithms);
  // A pool that keeps its base's algorithm keeps its base's numbers; a new algorithm starts from its own.
  EpCommConfig c = defaults != nullptr && defaults->algorithm == algorithm ? *defaults : algorithm_defaults(algorithm);
  c.dispatch_dtype = t.choice<WireDtype>("dispatch_dtype", c.dispatch_dtype,
                                         "dispatch payload: bf16 or fp8 (per-block scales)", k_dtypes);
  c.combine_dtype = t.choice<WireDtype>("combine_dtype", c.combine_dtype, "combine payload: bf16 or fp8", k_dtypes);
  c.fp8_block = static_cast<int>(t.integer("fp8_block", c.fp8_block, "FP8: elements per float32 scale", {1, 1 << 20}));
  c.overlap = t.choice<OverlapMode>(
      "overlap", defaults != nullptr ? defaults->overlap : c.overlap,
      "none, or two_batch: two half-batches, one's dispatch/combine under the other's compute", k_overlaps);
  c.alpha_us = t.real("alpha_us", c.alpha_us, "DeepEP: startup of one dispatch or combine, us", core::k_non_negative);
  c.message_ns = t.real("message_ns", c.message_ns, "low latency: issue cost per message, ns", core::k_non_negative);
  c.compute_dispatch_us =
      t.real("compute_dispatch_us", c.compute_dispatch_us,
             "low latency + two-batch overlap: compute-stream time of one dispatch, us", core::k_non_negative);
  c.compute_combine_us =
      t.real("compute_combine_us", c.compute_combine_us,
             "low latency + two-batch overlap: compute-stream time of one combine, us", core::k_non_negative);
  c.comm_sms = static_cast<int>(t.integer("comm_sms", c.comm_sms, "normal mode: SMs its kernels use", {1, 1024}));
  c.sm_gbps = t.real("sm_gbps", c.sm_gbps, "normal mode: GB/s one SM moves (0 = no SM limit)", core::k_non_negative);
  c.nvlink_efficiency = t.real("nvlink_efficiency", c.nvlink_efficiency,
                               "normal mode: share of NVLink's achievable rate its kernels reach", k_share);
  c.rdma_efficiency = t.real("rdma_efficiency", c.rdma_efficiency,
                             "normal mode: share of the network's achievable rate its kernels reach", k_share);
  c.overlap_exchange_factor =
      t.real("overlap_exchange_factor", c.overlap_exchange_factor,
             "normal mode + two-batch overlap: exchange time beside the other half's compute over its time alone",
             k_at_least_one);
  c.fanout_samples = static_cast<int>(
      t.integer("fanout_samples", c.fanout_samples, "tokens sampled per layer for node/GPU fan-out", {1, 1 << 20}));
  c.fanout_refresh_steps = static_cast<int>(
      t.integer("fanout_refresh_steps", c.fanout_refresh_steps, "steps between fan-out re-samplings", {1, 1 << 30}));
  return c;
}

}  // namespace epsim::hardware
