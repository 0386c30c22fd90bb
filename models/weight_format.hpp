// SPDX-License-Identifier: Apache-2.0
#pragma once
// How a model's weights are stored: the element format, its bytes per weight with the scale factors, and
// the tensor-core precision its GEMMs run in.
#include <array>
#include <cstdint>

#include "core/params.hpp"
#include "hardware/kernel_work.hpp"

namespace epsim::models {

enum class WeightFormat : std::uint8_t {
  bf16,   ///< 2 bytes
  fp8,    ///< e4m3, 1 byte (DeepSeek's one FP32 scale per 128 x 128 block, 0.02 %, is left out)
  mxfp4,  ///< OCP MX: e2m1 + one E8M0 (1-byte) scale per 32 weights = 4.25 bits
  nvfp4,  ///< NVIDIA: e2m1 + one E4M3 (1-byte) scale per 16 weights = 4.5 bits (+ a per-tensor FP32 scale)
  int4,   ///< symmetric INT4 + one BF16 scale per 32 weights = 4.5 bits, W4A16 (Kimi K2 Thinking / K2.5's QAT)
};

/// Bytes one weight takes, its block scale included (OCP Microscaling Formats v1.0 §5; NVIDIA's NVFP4
/// blog, 2025-06-24: 16-element blocks with an FP8 E4M3 scale).
inline constexpr double weight_format_bytes(WeightFormat f) {
  switch (f) {
    case WeightFormat::bf16:
      return 2.0;
    case WeightFormat::fp8:
      return 1.0;
    case WeightFormat::mxfp4:
      return (4.0 + 8.0 / 32.0) / 8.0;
    case WeightFormat::nvfp4:
      return (4.0 + 8.0 / 16.0) / 8.0;
    case WeightFormat::int4:
      return (4.0 + 16.0 / 32.0) / 8.0;
  }
  return 2.0;
}

/// The tensor-core precision the format's GEMMs run in (FP4 on a GPU without FP4 units: see roofline.hpp).
/// INT4 weights are dequantised into BF16 GEMMs (W4A16, Marlin-class kernels): BF16's peak.
inline constexpr hardware::Precision weight_format_precision(WeightFormat f) {
  switch (f) {
    case WeightFormat::bf16:
    case WeightFormat::int4:
      return hardware::Precision::bf16;
    case WeightFormat::fp8:
      return hardware::Precision::fp8;
    case WeightFormat::mxfp4:
    case WeightFormat::nvfp4:
      return hardware::Precision::fp4;
  }
  return hardware::Precision::bf16;
}

inline constexpr std::array<core::Choice<WeightFormat>, 5> k_weight_formats{{{"bf16", WeightFormat::bf16},
                                                                             {"fp8", WeightFormat::fp8},
                                                                             {"mxfp4", WeightFormat::mxfp4},
                                                                             {"nvfp4", WeightFormat::nvfp4},
                                                                             {"int4", WeightFormat::int4}}};

}  // namespace epsim::models
