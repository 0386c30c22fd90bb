// SPDX-License-Identifier: Apache-2.0
#include "sim/step_schedule.hpp"

#include "sim/sequential_schedule.hpp"
#include "sim/two_batch_overlap_schedule.hpp"

namespace epsim::serving {

std::unique_ptr<StepSchedule> make_step_schedule(const PricerInputs& in, double step_overhead_ns) {
  if (in.comm.overlap == hardware::OverlapMode::two_batch) {
    return std::make_unique<TwoBatchOverlapSchedule>(in, step_overhead_ns);
  }
  return std::make_unique<SequentialSchedule>(in, step_overhead_ns);
}

}  // namespace epsim::serving
