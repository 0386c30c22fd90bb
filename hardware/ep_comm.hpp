// SPDX-License-Identifier: Apache-2.0
#pragma once
// How an EP group's dispatch and combine move tokens (docs/model.md, "Expert-parallel communication").
// - nccl: one all-to-all of every token-expert pair (a token is copied once per expert, as a permuted
//   NCCL all-to-all does: Megatron's and vLLM's plain EP);
// - deepep_normal: DeepEP's throughput kernels (prefill). A token crosses the scale-out network once per
//   destination node, to the GPU of its own rail there, which forwards it over NVLink once per GPU that
//   holds one of its experts; RDMA and NVLink stages pipeline through channels driven by `comm_sms` SMs, at
//   the share of each link's rate the kernels reach; beside the other half's compute under two-batch
//   overlap they take overlap_exchange_factor times as long.
//   The combine reduces a token's expert outputs inside each node first and returns one copy per node;
// - deepep_low_latency: DeepEP's decode kernels: one message per token-expert pair straight to the
//   expert's GPU (RDMA across nodes, NVLink inside), a fixed cost per message, no forwarding;
// - deepep_auto: normal kernels for steps that prefill, low-latency ones for decode-only steps (SGLang's
//   --deepep-mode auto, for co-located serving), each with its own fitted numbers.
// Dispatch may travel in FP8 with one float32 scale per `fp8_block` elements (DeepEP's default), the
// combine in BF16. With two-batch overlap the batch is split in two halves whose communication overlaps
// the other half's computation (sim/overlap_schedule.hpp).
#include <cstdint>

#include "core/params.hpp"

namespace epsim::hardware {

enum class DispatchAlgorithm : std::uint8_t { nccl, deepep_normal, deepep_low_latency, deepep_auto };
enum class WireDtype : std::uint8_t { bf16, fp8 };
enum class OverlapMode : std::uint8_t { none, two_batch };

struct EpCommConfig {
  DispatchAlgorithm algorithm = DispatchAlgorithm::nccl;
  WireDtype dispatch_dtype = WireDtype::bf16;
  WireDtype combine_dtype = WireDtype::bf16;
  int fp8_block = 128;  ///< elements sharing one float32 scale in FP8 dispatch
  OverlapMode overlap = OverlapMode::none;
  /// Startup of one DeepEP dispatch or combine (kernel launch, notify/barrier between ranks), us; the
  /// nccl algorithm uses the cluster's collective_overhead_us instead, deepep_auto each family's default.
  /// Defaults: algorithm_defaults().
  double alpha_us = 0.0;
  double message_ns = 0.0;  ///< low latency: issue cost of one message, on the sending GPU
  /// Low latency under two-batch overlap: time one dispatch's / combine's send and receive kernels hold
  /// the compute stream, us (the messages then fly without SMs).
  double compute_dispatch_us = 0.0;
  double compute_combine_us = 0.0;
  int comm_sms = 24;     ///< normal mode: SMs its kernels occupy (DeepEP Buffer.num_sms default)
  double sm_gbps = 0.0;  ///< normal mode: bytes per ns one SM's channel moves (caps the send side)
  /// Normal mode: share of the links' achievable rate its kernels reach over NVLink and over RDMA (fitted to
  /// DeepEP's published tables, algorithm_defaults(); comm_fits.toml holds the points).
  double nvlink_efficiency = 1.0;
  double rdma_efficiency = 1.0;
  /// Normal mode under two-batch overlap: dispatch and combine take this times their time alone, as they
  /// share the GPU with the other half's GEMMs (fitted to DeepSeek's profile, algorithm_defaults()).
  double overlap_exchange_factor = 1.0;
  int fanout_samples = 256;  ///< tokens sampled per layer to estimate node / GPU fan-out
  /// Compute time x this while communication runs beside it (set when the simulation is built: with
  /// two-batch overlap, DeepEP's normal kernels hold comm_sms of the GPU's SMs and the GEMMs get the rest).
  double overlap_compute_factor = 1.0;
  int fanout_refresh_steps = 64;  ///< steps between re-samplings of a layer's fan-out

  /// Whether dispatch costs depend on how many distinct nodes and GPUs each token reaches.
  bool deduplicates() const {
    return algorithm == DispatchAlgorithm::deepep_normal || algorithm == DispatchAlgorithm::deepep_auto;
  }
  /// Whether a step uses DeepEP's low-latency kernels (masked layout, no permutation).
  bool low_latency_kernels(bool step_prefills) const {
    return algorithm == DispatchAlgorithm::deepep_low_latency ||
           (algorithm == DispatchAlgorithm::deepep_auto && !step_prefills);
  }
  /// Whether a step's dispatch runs DeepEP's normal kernels (auto: steps that prefill).
  bool normal_kernels(bool step_prefills) const {
    return algorithm == DispatchAlgorithm::deepep_normal ||
           (algorithm == DispatchAlgorithm::deepep_auto && step_prefills);
  }
};

/// The fitted startup and per-message costs of `algorithm` (hardware/presets/comm_fits.toml explains).
EpCommConfig algorithm_defaults(DispatchAlgorithm algorithm);

/// Bytes one token's hidden state takes on the wire: BF16 2 x hidden; FP8 hidden + 4 per block of
/// `fp8_block` elements (DeepEP: 7,168 + 224 = 7,392 for DeepSeek-V3).
double wire_bytes_per_token(WireDtype dtype, std::int64_t hidden, int fp8_block);

const char* algorithm_name(DispatchAlgorithm algorithm);

/// overlap_compute_factor for `comm` on a GPU of `sm_count` SMs (1 when nothing shares the SMs).
double overlap_compute_factor(const EpCommConfig& comm, int sm_count);

/// Reads a [communication] table (or a pool's override of it, layered on `defaults`).
EpCommConfig parse_ep_comm(core::ParamTable& t, const EpCommConfig* defaults = nullptr);

}  // namespace epsim::hardware
