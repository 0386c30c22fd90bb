// SPDX-License-Identifier: Apache-2.0
#include "sim/two_batch_overlap_schedule.hpp"

#include <algorithm>

namespace epsim::serving {

namespace {
// A half is one pass through the layers; the overlap is this schedule's.
PricerInputs one_pass(PricerInputs in) {
  in.comm.overlap = hardware::OverlapMode::none;
  return in;
}
}  // namespace

TwoBatchOverlapSchedule::HalfLayers::HalfLayers(int num_gpus, std::int64_t moe_layers)
    : gpus(num_gpus),
      phases(static_cast<std::size_t>(moe_layers)),
      records(static_cast<std::size_t>(moe_layers)),
      local(Eigen::ArrayXXd::Zero(num_gpus, moe_layers)),
      expert(Eigen::ArrayXXd::Zero(num_gpus, moe_layers)),
      tokens(static_cast<std::size_t>(moe_layers) * static_cast<std::size_t>(num_gpus), 0),
      activated(static_cast<std::size_t>(moe_layers) * static_cast<std::size_t>(num_gpus), 0) {}

void TwoBatchOverlapSchedule::HalfLayers::on_layer(const LayerRecord& rec) {
  const auto l = static_cast<std::size_t>(rec.moe_layer);
  phases[l] = HalfLayer{rec.attention_phase_ns, rec.dispatch_ns, rec.expert_max_ns, rec.combine_ns};
  records[l] = rec;
  local.col(rec.moe_layer) = Eigen::Map<const Eigen::ArrayXd>(rec.gpu_local_ns.data(), gpus);
  expert.col(rec.moe_layer) = Eigen::Map<const Eigen::ArrayXd>(rec.gpu_expert_ns.data(), gpus);
  std::copy(rec.gpu_tokens.begin(), rec.gpu_tokens.end(), tokens.begin() + static_cast<std::ptrdiff_t>(l * gpus));
  std::copy(rec.gpu_activated.begin(), rec.gpu_activated.end(),
            activated.begin() + static_cast<std::ptrdiff_t>(l * gpus));
}

TwoBatchOverlapSchedule::TwoBatchOverlapSchedule(const PricerInputs& in, double step_overhead_ns)
    : comm_(in.comm),
      step_overhead_ns_(step_overhead_ns),
      gpus_(in.topology.num_gpus()),
      halves_{{MicroBatchPricer(one_pass(in)), MicroBatchPricer(one_pass(in))}},
      layers_{{HalfLayers(gpus_, in.model.num_moe_layers()), HalfLayers(gpus_, in.model.num_moe_layers())}} {
  // Both halves start their fan-out samples from one seed and re-sample at the same steps: the second
  // reuses the first's draws instead of repeating them (exact: FanoutEstimator::follow checks the state).
  halves_[1].follow_fanout(halves_[0]);
  busy_ns_.setZero(gpus_);
  sum_local_.setZero(gpus_);
  sum_expert_.setZero(gpus_);
  step_loads_.assign(static_cast<std::size_t>(in.model.num_moe_layers() * in.model.routed_experts), 0);
  sum_tokens_.assign(static_cast<std::size_t>(gpus_), 0);
  sum_activated_.assign(static_cast<std::size_t>(gpus_), 0);
}

void TwoBatchOverlapSchedule::add_low_latency_kernels() {
  // DeepEP's low-latency dispatch and combine free the SMs while their messages fly, but their send and
  // receive kernels run on the compute stream: a dispatch's before the experts it feeds, a combine's before
  // the next layer's local work (the last one's before the tail).
  const double dispatch_ns = comm_.compute_dispatch_us * 1e3;
  const double combine_ns = comm_.compute_combine_us * 1e3;
  for (std::size_t m = 0; m < 2; ++m) {
    std::vector<HalfLayer>& layers = layers_[m].phases;
    for (std::size_t l = 0; l < layers.size(); ++l) {
      layers[l].expert_ns += dispatch_ns;
      (l + 1 < layers.size() ? layers[l + 1].local_ns : tails_[m]) += combine_ns;
    }
  }
}

void TwoBatchOverlapSchedule::price(const Batch& batch, core::Time now, int group, std::int64_t step,
                                    std::span<Observer* const> observers, StepRecord& out) {
  split_batch(batch, half_batches_[0], half_batches_[1]);
  busy_ns_.setZero();
  std::fill(step_loads_.begin(), step_loads_.end(), 0);
  const bool prefills = batch.prefill_tokens > 0;  // a half's kernels are its whole batch's
  // DeepEP's normal kernels share the GPU with the other half's GEMMs (ep_comm.hpp).
  const MicroBatchStep pass{
      now, group, step, prefills, comm_.normal_kernels(prefills) ? comm_.overlap_exchange_factor : 1.0, 0.0};
  for (std::size_t m = 0; m < 2; ++m) {
    MicroBatchPricer& h = halves_[m];
    Observer* const keep = &layers_[m];
    half_records_[m] = StepRecord{};
    h.price(half_batches_[m], pass, {&keep, 1}, half_records_[m]);
    tails_[m] = h.tail_ns();
    busy_ns_ += h.busy_ns();
    const std::span<const std::int32_t> loads = h.step_loads();
    for (std::size_t i = 0; i < step_loads_.size(); ++i) {
      step_loads_[i] += loads[i];
    }
    out.barrier_idle_ns += half_records_[m].barrier_idle_ns;
    out.comm_ns += half_records_[m].comm_ns;
    out.straggler_gap_sum_ns += half_records_[m].straggler_gap_sum_ns;
    out.straggler_gap_max_ns = std::max(out.straggler_gap_max_ns, half_records_[m].straggler_gap_max_ns);
    out.intra_bytes += half_records_[m].intra_bytes;
    out.inter_bytes += half_records_[m].inter_bytes;
  }
  out.moe_layers = half_records_[0].moe_layers;
  const double compute_factor = comm_.overlap_compute_factor;
  if (compute_factor != 1.0 && comm_.normal_kernels(prefills)) {
    // The GEMMs run on the SMs the communication kernels leave them.
    for (std::size_t m = 0; m < 2; ++m) {
      for (HalfLayer& l : layers_[m].phases) {
        l.local_ns *= compute_factor;
        l.expert_ns *= compute_factor;
      }
      tails_[m] *= compute_factor;
    }
  }
  if (comm_.low_latency_kernels(prefills)) {
    add_low_latency_kernels();
  }
  schedule_two_batches(layers_[0].phases, layers_[1].phases, tails_[0], tails_[1], timeline_);
  out.duration_ns = timeline_.end_ns + step_overhead_ns_;
  report_layers(observers);
}

void TwoBatchOverlapSchedule::report_layers(std::span<Observer* const> observers) {
  const HalfLayers& a = layers_[0];
  const HalfLayers& b = layers_[1];
  for (std::size_t l = 0; l < a.records.size(); ++l) {
    LayerRecord rec = a.records[l];
    const LayerRecord& br = b.records[l];
    rec.offset_ns = timeline_.layer_start[l];
    rec.attention_phase_ns += br.attention_phase_ns;
    rec.attention_idle_ns += br.attention_idle_ns;
    rec.dispatch_ns += br.dispatch_ns;
    rec.combine_ns += br.combine_ns;
    rec.expert_max_ns += br.expert_max_ns;
    rec.expert_min_ns += br.expert_min_ns;
    rec.expert_idle_ns += br.expert_idle_ns;
    rec.intra_bytes += br.intra_bytes;
    rec.inter_bytes += br.inter_bytes;
    const auto col = static_cast<Eigen::Index>(l);
    sum_local_ = a.local.col(col) + b.local.col(col);
    sum_expert_ = a.expert.col(col) + b.expert.col(col);
    for (std::size_t g = 0; g < static_cast<std::size_t>(gpus_); ++g) {
      const std::size_t i = l * static_cast<std::size_t>(gpus_) + g;
      sum_tokens_[g] = a.tokens[i] + b.tokens[i];
      sum_activated_[g] = std::max(a.activated[i], b.activated[i]);
    }
    rec.gpu_local_ns = {sum_local_.data(), static_cast<std::size_t>(gpus_)};
    rec.gpu_expert_ns = {sum_expert_.data(), static_cast<std::size_t>(gpus_)};
    rec.gpu_tokens = sum_tokens_;
    rec.gpu_activated = sum_activated_;
    for (Observer* o : observers) {
      o->on_layer(rec);
    }
  }
}

}  // namespace epsim::serving
