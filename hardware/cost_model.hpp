// SPDX-License-Identifier: Apache-2.0
#pragma once
// The one interface through which the serving engine asks how long a kernel takes on a given GPU (the
// roofline lives in hardware/ only; policies see its results as cost curves, policies/cost_curves.hpp).
// Implementations: the roofline with per-GPU variability; later, measured profiles.
#include <cstdint>
#include <span>

#include "core/time.hpp"
#include "hardware/kernel_work.hpp"
#include "hardware/moe_tile.hpp"

namespace epsim::hardware {

class CostModel {
 public:
  virtual ~CostModel() = default;
  virtual int num_gpus() const = 0;
  /// Expected duration of one kernel on GPU `gpu` at the model's current time, in nanoseconds.
  /// Deterministic: policies may call it freely without disturbing the simulation's random streams.
  virtual double kernel_ns(int gpu, const hardware::KernelWork& work) const = 0;
  /// Grouped-GEMM tile rule of `gpu`'s MoE calls (hardware/moe_tile.hpp).
  virtual MoeTileRule moe_tile_rule(int gpu) const = 0;
  /// Grouped-GEMM tile of an MoE call of `m_tokens` token-expert pairs over `local_experts` experts on
  /// `gpu`: every expert's tokens are padded up to a multiple of it.
  std::int64_t moe_tile(int gpu, std::int64_t m_tokens, std::int64_t local_experts) const {
    return moe_tile_rule(gpu).tile(m_tokens, local_experts);
  }
  /// Moves time-dependent state (speed drift) to `now`; `now` never decreases.
  virtual void advance_to(core::Time /*now*/) {}
  /// GPUs [first_gpu, first_gpu + gpus) begin a step at `start` (a power limiter: they idled until now).
  virtual void begin_step(int /*first_gpu*/, int /*gpus*/, core::Time /*start*/) {}
  /// They ran it until `end`, GPU first_gpu + i busy busy_ns[i] of it (in its own kernels), drawing
  /// `power_weight` (power_weight()) of full power while busy.
  virtual void end_step(int /*first_gpu*/, std::span<const double> /*busy_ns*/, core::Time /*start*/,
                        core::Time /*end*/, double /*power_weight*/) {}
  /// The share of full power `gpu` draws running `work` (1 for compute-bound work).
  virtual double power_weight(int /*gpu*/, const hardware::KernelWork& /*work*/) const { return 1.0; }
  /// Whether a power limiter clocks the GPUs (then power_clock tells each one's clock).
  virtual bool power_limited() const { return false; }
  /// GPU `gpu`'s power-limited clock over its cold clock now (1 without a limiter).
  virtual double power_clock(int /*gpu*/) const { return 1.0; }
  /// A multiplicative noise sample for one kernel on `gpu` (1 when the model has no jitter).
  virtual double jitter(int /*gpu*/) { return 1.0; }
  virtual bool has_jitter() const { return false; }
  /// GPUs of one price class price every kernel identically (kernel_ns, moe_tile; jitter aside) until the
  /// model's speeds change, so callers may memoise a class's prices (sim/expert_price_cache.hpp). -1: a
  /// GPU whose prices must not be memoised (time-dependent speeds, or a model that cannot tell).
  virtual int price_class(int /*gpu*/) const { return -1; }
};

}  // namespace epsim::hardware
