// SPDX-License-Identifier: Apache-2.0
#pragma once
// Importer of a PyTorch profiler Chrome trace (torch.profiler with record_shapes=True, exported with
// export_chrome_trace). GPU kernels (cat "kernel") are tied to the CPU op that launched them by the
// "External id" both carry (or, when the kernel lacks it, the "correlation" id it shares with the
// runtime launch event, which carries the External id); the op's enclosing ops on its thread (by time
// nesting) are searched too, and the outermost op that maps to a measured op owns the kernel:
// - aten::mm / addmm / matmul / linear -> dense_gemm, m x k by k x n from "Input Dims";
// - aten::(_)scaled_dot_product_(flash|efficient|cudnn)_attention ([batch, heads, seq, head_dim]) and
//   flash_attn ops ([batch, seq, heads, head_dim]) -> attention_decode when one query token, else
//   attention_prefill (kv_tokens from the key);
// - the op above a kernel whose name contains "fused_moe" whose inputs read hidden states [T, H], w1
//   [E, 2 I, H] and top-k ids [T, k] -> expert_ffn.
// One row per op call, its kernels' durations summed. Other kernels are skipped and counted (o.log).
// dtype from "Input type" (16-bit floats -> bf16, float8 -> fp8; other types are skipped). gpu from the
// trace's deviceProperties name of the kernel's device, else --gpu.
#include <filesystem>
#include <span>

#include "calibration/import_options.hpp"
#include "calibration/measurement_table.hpp"

namespace epsim::calibration {

MeasurementTable import_torch_trace(std::span<const std::filesystem::path> files, const ImportOptions& o);

}  // namespace epsim::calibration
