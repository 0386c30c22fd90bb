// SPDX-License-Identifier: Apache-2.0
#pragma once
// Two-batch overlap (overlap_schedule.hpp): the step's batch split in halves, each priced by its own
// MicroBatchPricer, then the halves' layers scheduled on a compute and a communication stream. With DeepEP's
// normal kernels the exchanges and the GEMMs beside them are slowed by the in-step factors; with its
// low-latency kernels their send and receive kernels take the compute stream. Observers see each MoE layer
// once, the halves' work added up. Buffers are sized once.
#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <vector>

#include "sim/micro_batch_pricer.hpp"
#include "sim/overlap_schedule.hpp"
#include "sim/step_schedule.hpp"

namespace epsim::serving {

class TwoBatchOverlapSchedule final : public StepSchedule {
 public:
  TwoBatchOverlapSchedule(const PricerInputs& in, double step_overhead_ns);
  void price(const Batch& batch, core::Time now, int group, std::int64_t step, std::span<Observer* const> observers,
             StepRecord& out) override;
  std::span<const double> gpu_busy_ns() const override {
    return {busy_ns_.data(), static_cast<std::size_t>(busy_ns_.size())};
  }
  std::span<const std::pair<double, double>> compute_windows() const override { return timeline_.compute; }
  std::span<const std::int32_t> step_loads() const override { return step_loads_; }

 private:
  // One half's MoE layers as its pricer reported them: phase times, records and (layer-major) per-GPU figures.
  struct HalfLayers final : Observer {
    HalfLayers(int num_gpus, std::int64_t moe_layers);
    void on_layer(const LayerRecord& rec) override;
    int gpus;
    std::vector<HalfLayer> phases;
    std::vector<LayerRecord> records;
    Eigen::ArrayXXd local, expert;  // gpus x MoE layers
    std::vector<std::int32_t> tokens, activated;
  };
  // Low-latency kernels: their send/receive kernels' time on the compute stream.
  void add_low_latency_kernels();
  // Reports each MoE layer once to `observers`, the halves' work added up (per GPU too).
  void report_layers(std::span<Observer* const> observers);

  hardware::EpCommConfig comm_;
  double step_overhead_ns_;
  int gpus_;
  std::array<MicroBatchPricer, 2> halves_;
  std::array<HalfLayers, 2> layers_;
  std::array<double, 2> tails_{};  // each half's tail, as scheduled
  std::array<Batch, 2> half_batches_;
  std::array<StepRecord, 2> half_records_;
  OverlapTimeline timeline_;
  Eigen::ArrayXd busy_ns_, sum_local_, sum_expert_;
  std::vector<std::int32_t> step_loads_, sum_tokens_, sum_activated_;
};

}  // namespace epsim::serving
