// SPDX-License-Identifier: Apache-2.0
#pragma once
// The work of one GPU kernel as the cost models see it: its family, precision, FLOPs and bytes. It is
// hardware's vocabulary: hardware/ prices it (roofline.hpp, cost_model.hpp), models/ describes each of a
// layer's kernels in it (models/layer_work.hpp), so models sit above hardware.
#include <cstdint>

namespace epsim::hardware {

/// Kernel families with their own achievable efficiencies (and, later, their own measured profiles).
enum class OpKind : std::uint8_t {
  dense_gemm,         ///< projections, dense FFN, shared experts, router, LM head
  expert_ffn,         ///< grouped GEMM over the activated routed experts of one GPU
  attention_prefill,  ///< attention scores/values of prefill tokens (FlashAttention-like)
  attention_decode,   ///< attention of decode tokens over their KV cache (paged decode kernel)
  sparse_indexer,     ///< DeepSeek Sparse Attention's lightning indexer (FP8 MQA logits + top-k)
  linear_attention,   ///< linear-attention recurrences (Gated DeltaNet, lightning): chunked scan / state update
};
inline constexpr int k_op_kinds = 6;
inline constexpr const char* op_kind_name(OpKind k) {
  switch (k) {
    case OpKind::dense_gemm:
      return "dense_gemm";
    case OpKind::expert_ffn:
      return "expert_ffn";
    case OpKind::attention_prefill:
      return "attention_prefill";
    case OpKind::attention_decode:
      return "attention_decode";
    case OpKind::sparse_indexer:
      return "sparse_indexer";
    case OpKind::linear_attention:
      return "linear_attention";
  }
  return "?";
}

/// The tensor-core precision a kernel's math runs in; each has its own peak and efficiencies.
enum class Precision : std::uint8_t { bf16, fp8, fp4 };
inline constexpr int k_precisions = 3;
inline constexpr const char* precision_name(Precision p) {
  switch (p) {
    case Precision::bf16:
      return "bf16";
    case Precision::fp8:
      return "fp8";
    case Precision::fp4:
      return "fp4";
  }
  return "?";
}

struct KernelWork {
  OpKind kind = OpKind::dense_gemm;
  Precision precision = Precision::bf16;
  double flops = 0.0;     ///< floating-point operations (multiply-add = 2)
  double bytes = 0.0;     ///< bytes moved to/from HBM (weights + activations + KV cache)
  double tokens = 0.0;    ///< tokens processed (for profiles keyed on token count)
  double launches = 1.0;  ///< kernels this work stands for: each pays the launch and fixed cost
  /// A GEMM's output shape (m rows x n columns), which its tiles cover in waves over the SMs; 0 = not a
  /// single GEMM (no tile quantisation). Several GEMMs priced as one give their common m and summed n.
  double gemm_m = 0.0;
  double gemm_n = 0.0;
  /// Attention: the head dim of the score products (QK^T), on which FlashAttention's efficiency
  /// depends (the softmax per score costs as much as head-dim-many multiply-adds); 0 = not attention.
  double head_dim = 0.0;
};

}  // namespace epsim::hardware
