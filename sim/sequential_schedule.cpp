// SPDX-License-Identifier: Apache-2.0
#include "sim/sequential_schedule.hpp"

namespace epsim::serving {

SequentialSchedule::SequentialSchedule(const PricerInputs& in, double step_overhead_ns)
    : pricer_(in), step_overhead_ns_(step_overhead_ns) {}

void SequentialSchedule::price(const Batch& batch, core::Time now, int group, std::int64_t step,
                               std::span<Observer* const> observers, StepRecord& out) {
  // Alone on the GPU: its exchanges take their own time.
  const MicroBatchStep pass{now, group, step, batch.prefill_tokens > 0, 1.0, step_overhead_ns_};
  pricer_.price(batch, pass, observers, out);
}

}  // namespace epsim::serving
