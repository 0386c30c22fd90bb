#pragma once
// A GPU's datasheet numbers plus the kernel-level constants of the roofline (achievable efficiencies,
// launch overhead, MoE tile). Presets are TOML files in hardware/presets/gpus/, embedded in the binary.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/params.hpp"
#include "sim/core/presets.hpp"

namespace epsim::hardware {

struct GpuSpec {
  std::string name;
  double bf16_tflops = 0.0;           ///< peak dense BF16 TFLOP/s (no sparsity)
  double fp8_tflops = 0.0;            ///< peak dense FP8 TFLOP/s; 0 = no FP8 (BF16 peak is used)
  double hbm_gbps = 0.0;              ///< HBM bandwidth, GB/s (1e9 bytes/s)
  double memory_gib = 0.0;            ///< HBM capacity, GiB
  double tdp_w = 0.0;                 ///< board power, W
  double compute_efficiency = 0.7;    ///< achievable share of peak FLOP/s in large GEMMs
  double memory_efficiency = 0.8;     ///< achievable share of HBM bandwidth in streaming kernels
  double kernel_launch_us = 4.0;      ///< fixed overhead per kernel (launch + tail), microseconds
  std::int64_t moe_tile_tokens = 16;  ///< grouped-GEMM tile: tokens per expert are padded to it
};

/// Parses a GPU spec from a table (a preset layered under user overrides); validates every field.
GpuSpec parse_gpu_spec(core::ParamTable& t);

/// The shipped GPU presets.
const core::PresetCatalog& gpu_presets();

}  // namespace epsim::hardware
