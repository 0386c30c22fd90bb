// SPDX-License-Identifier: Apache-2.0
#pragma once
// How a step's micro-batches share the group's GPUs: one pass through the layers (SequentialSchedule), or
// two halves on a compute and a communication stream (TwoBatchOverlapSchedule). Chosen once, from the
// communication config; a new overlap or communication scheme is a new schedule, not a flag in the pricer
// (micro_batch_pricer.hpp).
#include <cstdint>
#include <memory>
#include <span>
#include <utility>

#include "core/time.hpp"
#include "sim/batch.hpp"
#include "sim/micro_batch_pricer.hpp"
#include "sim/observer.hpp"

namespace epsim::serving {

class StepSchedule {
 public:
  virtual ~StepSchedule() = default;
  /// Prices `batch` after the routing source has begun the step: `out`'s duration, phases and totals (its
  /// identity and token counts are set already); observers see every MoE layer once.
  virtual void price(const Batch& batch, core::Time now, int group, std::int64_t step,
                     std::span<Observer* const> observers, StepRecord& out) = 0;
  /// The last step's time in each GPU's own kernels.
  virtual std::span<const double> gpu_busy_ns() const = 0;
  /// The last step's compute phases (no collective under way), [start, end) ns from the step's start.
  virtual std::span<const std::pair<double, double>> compute_windows() const = 0;
  /// The last step's tokens per expert, [moe layer][expert].
  virtual std::span<const std::int32_t> step_loads() const = 0;
};

/// The schedule `in.comm` asks for; `step_overhead_ns` is added once to every step.
std::unique_ptr<StepSchedule> make_step_schedule(const PricerInputs& in, double step_overhead_ns);

}  // namespace epsim::serving
