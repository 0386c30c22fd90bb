// SPDX-License-Identifier: Apache-2.0
#pragma once
// A step as one micro-batch: the whole batch through the layers in lockstep, then the step's overhead.
#include "sim/micro_batch_pricer.hpp"
#include "sim/step_schedule.hpp"

namespace epsim::serving {

class SequentialSchedule final : public StepSchedule {
 public:
  SequentialSchedule(const PricerInputs& in, double step_overhead_ns);
  void price(const Batch& batch, core::Time now, int group, std::int64_t step, std::span<Observer* const> observers,
             StepRecord& out) override;
  std::span<const double> gpu_busy_ns() const override {
    return {pricer_.busy_ns().data(), static_cast<std::size_t>(pricer_.busy_ns().size())};
  }
  std::span<const std::pair<double, double>> compute_windows() const override { return pricer_.compute_windows(); }
  std::span<const std::int32_t> step_loads() const override { return pricer_.step_loads(); }

 private:
  MicroBatchPricer pricer_;
  double step_overhead_ns_;
};

}  // namespace epsim::serving
