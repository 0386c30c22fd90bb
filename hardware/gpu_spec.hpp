// SPDX-License-Identifier: Apache-2.0
#pragma once
// A GPU's datasheet numbers plus the kernel-level constants of the roofline: achievable efficiencies per
// kernel family, launch overhead, and the grouped-GEMM tile rule. Presets are TOML files in
// hardware/presets/gpus/ (each cites its source), embedded in the binary.
#include <array>
#include <cstdint>
#include <string>

#include "core/params.hpp"
#include "core/presets.hpp"
#include "hardware/kernel_library.hpp"
#include "hardware/kernel_work.hpp"
#include "hardware/moe_tile.hpp"

namespace epsim::hardware {

/// Achievable share of peak compute and of peak memory bandwidth for one kernel family (at one precision),
/// and the shape of its roofline: `knee` p > 0 blends the two bounds as (compute^p + memory^p)^(1/p), the
/// smooth knee real kernels show (0 = the sharp max of the plain roofline); `fixed_us` is a fixed cost of
/// the family's kernels on top of the launch overhead (tile set-up, small-batch tails; may be negative
/// down to minus the launch overhead, when a calibration finds the family's kernels cheaper to start);
/// `floor_us` is the least time one kernel's body takes however little work it has (one wave of tiles
/// loading, computing and storing: small-batch decode attention, a one-token fused MoE); attention's
/// `softmax_head_dim` h makes the compute efficiency at head dim d compute x d / (d + h) (the softmax
/// costs a fixed time per score, FlashAttention-3's bottleneck at small head dims; 0 = none).
/// `library` names the kernel library the values describe (kernel_library.hpp). Calibrated presets
/// (epsim calibrate fit) set them.
struct Efficiency {
  double compute = 0.7;
  double memory = 0.8;
  double knee = 0.0;
  double fixed_us = 0.0;
  double floor_us = 0.0;
  double softmax_head_dim = 0.0;
  hardware::KernelLibrary library = hardware::KernelLibrary::any;
  bool operator==(const Efficiency&) const = default;
};

using FamilyEfficiencies = std::array<Efficiency, hardware::k_op_kinds>;
/// Per OpKind, then per Precision: the efficiencies a kernel of that family and precision runs at.
using PrecisionEfficiencies = std::array<std::array<Efficiency, hardware::k_precisions>, hardware::k_op_kinds>;

/// Every precision of each family at the family's values.
inline PrecisionEfficiencies every_precision(const FamilyEfficiencies& family) {
  PrecisionEfficiencies out{};
  for (std::size_t k = 0; k < out.size(); ++k) {
    out[k].fill(family[k]);
  }
  return out;
}

struct GpuSpec {
  std::string name;
  double bf16_tflops = 0.0;   ///< peak dense BF16 TFLOP/s (no sparsity, FP32 accumulation)
  double fp16_tflops = 0.0;   ///< peak dense FP16 TFLOP/s
  double fp8_tflops = 0.0;    ///< peak dense FP8 TFLOP/s; 0 = no FP8 (BF16 peak is used)
  double fp4_tflops = 0.0;    ///< peak dense FP4 TFLOP/s; 0 = no FP4 (the FP8, else BF16 peak is used)
  double hbm_gbps = 0.0;      ///< memory bandwidth, GB/s (1e9 bytes/s)
  double memory_gib = 0.0;    ///< memory capacity, GiB
  double tdp_w = 0.0;         ///< board power, W
  int sm_count = 0;           ///< streaming multiprocessors (AMD: compute units); 0 = unknown
  std::string scale_up_link;  ///< link type of its scale-up fabric (informational)
  /// The largest share of hbm_gbps a kernel reaches (a measured copy bandwidth): no memory efficiency may
  /// exceed it, and a fit stays under it.
  double max_memory_efficiency = 1.0;
  /// Per precision (bf16, fp8, fp4): the largest share of that precision's peak any kernel reaches (the
  /// GPU's measured max-achievable FLOP/s over peak, e.g. AMD's MAF table). Every family's compute
  /// efficiency is capped at it, so a preset can bound the defaults without per-precision tables.
  std::array<double, hardware::k_precisions> max_compute_efficiency{1.0, 1.0, 1.0};
  /// The [efficiency.<family>] tables: each family's values for every precision without its own table.
  FamilyEfficiencies family_efficiency{
      Efficiency{0.75, 0.85},  // dense_gemm
      Efficiency{0.65, 0.80},  // expert_ffn (grouped GEMM, ragged tiles)
      Efficiency{0.60, 0.80},  // attention_prefill
      Efficiency{0.50, 0.75},  // attention_decode (paged KV gathers)
      // Uncalibrated: no public measurement of these kernels on any preset GPU; attention_prefill's values.
      Efficiency{0.60, 0.80},  // sparse_indexer
      Efficiency{0.60, 0.80},  // linear_attention
  };
  /// Resolved per family and precision: [efficiency.<family>.<precision>] over the family's values.
  PrecisionEfficiencies efficiency = every_precision(family_efficiency);
  double kernel_launch_us = 4.0;  ///< fixed overhead per kernel (launch + tail), microseconds
  /// Grouped-GEMM tile, vLLM's default rule: tokens per expert are padded to `moe_tile_small` when the
  /// GPU's MoE call has M <= threshold tokens (threshold 0 = its local expert count, vLLM's M <= E),
  /// else to `moe_tile_large`.
  std::int64_t moe_tile_small = 16;
  std::int64_t moe_tile_large = 64;
  std::int64_t moe_tile_threshold = 0;
  /// Output tile of a dense GEMM (rows x columns one SM computes at a time): more tiles than SMs run in
  /// waves, the last one partly idle (needs sm_count).
  std::int64_t gemm_tile_m = 128;
  std::int64_t gemm_tile_n = 128;

  const Efficiency& eff(hardware::OpKind k, hardware::Precision p) const {
    return efficiency[static_cast<std::size_t>(k)][static_cast<std::size_t>(p)];
  }
  /// Sets a family's values for every precision (its [efficiency.<family>] table without overrides).
  void set_family_efficiency(hardware::OpKind k, const Efficiency& e) {
    family_efficiency[static_cast<std::size_t>(k)] = e;
    efficiency[static_cast<std::size_t>(k)].fill(e);
  }
  /// The tile rule of this GPU model's grouped GEMMs.
  MoeTileRule moe_tile_rule() const { return {moe_tile_small, moe_tile_large, moe_tile_threshold}; }
  /// The tile for an MoE call of `m_tokens` token-expert pairs over `local_experts` experts.
  std::int64_t moe_tile(std::int64_t m_tokens, std::int64_t local_experts) const {
    return moe_tile_rule().tile(m_tokens, local_experts);
  }
};

/// Parses a GPU spec from a table (a preset layered under user overrides); validates every field.
GpuSpec parse_gpu_spec(core::ParamTable& t);

/// The shipped GPU presets.
const core::PresetCatalog& gpu_presets();
/// A shipped preset as a GpuSpec; throws core::Error listing the valid names if unknown.
GpuSpec load_gpu_preset(const std::string& name);

}  // namespace epsim::hardware
