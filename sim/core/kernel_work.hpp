#pragma once
// The work of one GPU kernel as the cost models see it: produced by models/ (what a layer does),
// priced by hardware/ (how long it takes). Plain data so neither side includes the other.
#include <cstdint>

namespace epsim::core {

enum class OpKind : std::uint8_t {
  attention,   ///< attention projections + score/value products
  dense_ffn,   ///< dense MLP (first dense layers, shared experts)
  expert_ffn,  ///< grouped GEMM over the activated routed experts of one GPU
  router,      ///< gate projection hidden -> experts
  lm_head,     ///< vocabulary projection of the tokens that emit a token
};

enum class Precision : std::uint8_t { bf16, fp8 };

struct KernelWork {
  OpKind kind = OpKind::dense_ffn;
  Precision precision = Precision::bf16;
  double flops = 0.0;   ///< floating-point operations (multiply-add = 2)
  double bytes = 0.0;   ///< bytes moved to/from HBM (weights + activations + KV cache)
  double tokens = 0.0;  ///< tokens processed (for profiles keyed on token count)
};

}  // namespace epsim::core
