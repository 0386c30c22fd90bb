#pragma once
// The one interface through which the serving engine and the policies ask how long a kernel takes on a
// given GPU (DESIGN.md 4: "the roofline lives in hardware/ only"). Implementations: the roofline with
// per-GPU speed factors; later, measured profiles.
#include <cstdint>

#include "sim/core/kernel_work.hpp"

namespace epsim::hardware {

class CostModel {
 public:
  virtual ~CostModel() = default;
  virtual int num_gpus() const = 0;
  /// Duration of one kernel on GPU `gpu`, in nanoseconds.
  virtual double kernel_ns(int gpu, const core::KernelWork& work) const = 0;
  /// Tokens one expert's GEMM really computes on `gpu` for `tokens` routed tokens: rounded up to the
  /// kernel tile (0 stays 0), which gives expert latency its staircase shape.
  virtual std::int64_t padded_expert_tokens(int gpu, std::int64_t tokens) const = 0;
};

}  // namespace epsim::hardware
