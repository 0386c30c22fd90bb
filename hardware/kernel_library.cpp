// SPDX-License-Identifier: Apache-2.0
#include "hardware/kernel_library.hpp"

#include <array>

namespace epsim::hardware {
namespace {

constexpr std::uint8_t bit(OpKind k) {
  return static_cast<std::uint8_t>(1U << static_cast<unsigned>(k));
}
constexpr std::uint8_t k_attention = bit(OpKind::attention_prefill) | bit(OpKind::attention_decode);
constexpr std::uint8_t k_every = (1U << k_op_kinds) - 1U;

constexpr std::array<std::string_view, 0> k_none{};
constexpr std::array<std::string_view, 3> k_cublas{"cublas", "torch_mm", "torch_scaled_mm"};
constexpr std::array<std::string_view, 1> k_deepgemm{"deepgemm"};
constexpr std::array<std::string_view, 2> k_triton_moe{"vllm_fused_moe_triton", "triton_fused_moe"};
constexpr std::array<std::string_view, 1> k_fa2{"flash_attn_2"};
constexpr std::array<std::string_view, 1> k_fa3{"flash_attn_3"};
constexpr std::array<std::string_view, 1> k_cudnn{"cudnn"};
constexpr std::array<std::string_view, 2> k_flashmla{"flashmla", "flash_mla"};
constexpr std::array<std::string_view, 1> k_flashinfer{"flashinfer"};

constexpr std::array<KernelLibraryInfo, 9> k_libraries{{
    {KernelLibrary::any, "any", k_every, k_none},
    {KernelLibrary::cublas, "cublas", bit(OpKind::dense_gemm), k_cublas},
    // DeepGEMM's fp8_mqa_logits is DeepSeek-V3.2's indexer kernel.
    {KernelLibrary::deepgemm, "deepgemm",
     bit(OpKind::dense_gemm) | bit(OpKind::expert_ffn) | bit(OpKind::sparse_indexer), k_deepgemm},
    {KernelLibrary::triton_fused_moe, "triton_fused_moe", bit(OpKind::expert_ffn), k_triton_moe},
    {KernelLibrary::flash_attn_2, "flash_attn_2", k_attention, k_fa2},
    {KernelLibrary::flash_attn_3, "flash_attn_3", k_attention, k_fa3},
    {KernelLibrary::cudnn, "cudnn", k_attention, k_cudnn},
    {KernelLibrary::flashmla, "flashmla", k_attention, k_flashmla},
    {KernelLibrary::flashinfer, "flashinfer", k_attention, k_flashinfer},
}};

constexpr std::array<core::Choice<KernelLibrary>, k_libraries.size()> choices() {
  std::array<core::Choice<KernelLibrary>, k_libraries.size()> out{};
  for (std::size_t i = 0; i < k_libraries.size(); ++i) {
    out[i] = {k_libraries[i].name, k_libraries[i].id};
  }
  return out;
}
constexpr auto k_choices = choices();

}  // namespace

std::span<const KernelLibraryInfo> kernel_libraries() {
  return k_libraries;
}

const KernelLibraryInfo& library_info(KernelLibrary lib) {
  return k_libraries[static_cast<std::size_t>(lib)];
}

std::span<const core::Choice<KernelLibrary>> kernel_library_choices() {
  return k_choices;
}

bool implements(KernelLibrary lib, OpKind family) {
  return (library_info(lib).families & bit(family)) != 0;
}

KernelLibrary library_of_kernel(std::string_view kernel) {
  for (const KernelLibraryInfo& l : k_libraries) {
    for (const std::string_view prefix : l.kernel_prefixes) {
      if (kernel.starts_with(prefix)) {
        return l.id;
      }
    }
  }
  return KernelLibrary::any;
}

}  // namespace epsim::hardware
