// SPDX-License-Identifier: Apache-2.0
#pragma once
// The kernel libraries a GPU preset's efficiencies can describe. Kernels of one family and precision
// still differ by library (FlashAttention-3 runs prefill attention about twice as fast as
// FlashAttention-2 on H100; vLLM's Triton FP8 fused MoE reaches a fraction of DeepGEMM's rate), so each
// (family, precision) efficiency names the library it was fitted to: `calibrate fit` takes it from the
// rows' `kernel` column, and `calibrate check` says when rows of another library are priced with it.
// Adding a library is one registry entry.
#include <cstdint>
#include <span>
#include <string_view>

#include "core/params.hpp"
#include "hardware/kernel_work.hpp"

namespace epsim::hardware {

enum class KernelLibrary : std::uint8_t {
  any,  ///< not tied to one library (the datasheet-derived defaults)
  cublas,
  deepgemm,
  triton_fused_moe,
  flash_attn_2,
  flash_attn_3,
  cudnn,
  flashmla,
  flashinfer,
};

/// One registry entry: the name presets and reports use, the families it implements (a bit per OpKind)
/// and the kernel names (as profilers and the public tables record them) that start with its prefixes.
struct KernelLibraryInfo {
  KernelLibrary id;
  std::string_view name;
  std::uint8_t families;
  std::span<const std::string_view> kernel_prefixes;
};

/// Every library, in enum order.
std::span<const KernelLibraryInfo> kernel_libraries();
const KernelLibraryInfo& library_info(KernelLibrary lib);
/// The libraries as a typed choice for ParamTable::choice.
std::span<const core::Choice<KernelLibrary>> kernel_library_choices();
/// Whether `lib` has kernels of `family` (`any` has every family).
bool implements(KernelLibrary lib, OpKind family);
/// The library of a recorded kernel name (case as written), `any` when no prefix matches.
KernelLibrary library_of_kernel(std::string_view kernel);

}  // namespace epsim::hardware
