// SPDX-License-Identifier: Apache-2.0
#pragma once
// Metric collectors subscribe to these events; the step loop does not grow a branch per metric. A new
// per-step or per-layer metric is one observer (summary_metric.hpp), not a field threaded through the
// engine.
#include <cstdint>
#include <span>

#include "core/time.hpp"
#include "policies/rebalance_kind.hpp"
#include "sim/admission_caps.hpp"
#include "sim/request_state.hpp"

namespace epsim::serving {

/// One MoE layer of one step (spans point into the executor's buffers: valid during the call only).
struct LayerRecord {
  int group = 0;
  std::int64_t step = 0;
  int layer = 0;                    ///< model layer index
  int moe_layer = 0;                ///< index among MoE layers
  core::Time step_start_ns = 0;     ///< when the step began
  double offset_ns = 0.0;           ///< when this layer's local phase began, from the step start
  double attention_phase_ns = 0.0;  ///< slowest GPU's local work before dispatch
  double attention_idle_ns = 0.0;   ///< sum over GPUs of (slowest - own) before dispatch
  double dispatch_ns = 0.0;
  double combine_ns = 0.0;
  double expert_max_ns = 0.0;
  double expert_min_ns = 0.0;
  double expert_idle_ns = 0.0;           ///< sum over GPUs of (slowest - own) in the expert phase
  double intra_bytes = 0.0;              ///< dispatch + combine bytes inside nodes
  double inter_bytes = 0.0;              ///< dispatch + combine bytes between nodes
  std::span<const double> gpu_local_ns;  ///< per GPU: local work (attention ...) before the dispatch
  std::span<const double> gpu_expert_ns;
  std::span<const std::int32_t> gpu_tokens;     ///< token-expert pairs per GPU
  std::span<const std::int32_t> gpu_activated;  ///< experts with >= 1 token per GPU

  double straggler_gap_ns() const { return expert_max_ns - expert_min_ns; }
};

/// One step of one EP group: the step executor fills it when the step starts, the engine adds its end
/// and the GPUs' busy time when it ends, and every observer gets this one record.
struct StepRecord {
  int group = 0;
  std::int64_t step = 0;
  core::Time start_ns = 0;
  core::Time end_ns = 0;
  double duration_ns = 0.0;  ///< priced duration (end_ns - start_ns is this rounded up to whole ns)
  double draft_ns = 0.0;     ///< of duration_ns: the draft passes (speculative decoding), after the verify
  std::int64_t prefill_tokens = 0;
  std::int64_t decode_tokens = 0;
  std::int64_t cached_tokens = 0;  ///< prompt tokens its admissions found in a prefix cache (not computed)
  std::int64_t output_tokens = 0;  ///< tokens it emitted (with speculative decoding, 1 + accepted per verify)
  std::int64_t requests = 0;
  double barrier_idle_ns = 0.0;       ///< GPU-ns spent waiting at barriers, summed over GPUs
  double comm_ns = 0.0;               ///< time in dispatch + combine
  double straggler_gap_sum_ns = 0.0;  ///< over the step's MoE layers
  double straggler_gap_max_ns = 0.0;
  int moe_layers = 0;
  double intra_bytes = 0.0;                  ///< dispatch + combine bytes inside nodes
  double inter_bytes = 0.0;                  ///< ... and between nodes
  std::span<const double> gpu_busy_ns = {};  ///< per GPU of the group: time in its own kernels (at on_step)
  double clock_mean = 1.0;  ///< power-limited clock over the cold clock, mean over the group's GPUs (dvfs)
  double clock_min = 1.0;   ///< ... and its slowest GPU's
  // The group's state once this step's batch was formed (its admissions and preemptions done), over
  // all its DP ranks.
  std::int64_t queued_requests = 0;     ///< arrived, waiting for admission (preempted ones included)
  std::int64_t running_requests = 0;    ///< admitted (holding a seat), not finished or handed off
  std::int64_t kv_used_tokens = 0;      ///< tokens the allocated KV blocks hold (blocks x block size)
  std::int64_t kv_capacity_tokens = 0;  ///< of every rank's KV cache; 0 = unlimited KV memory
  std::int64_t preemptions = 0;         ///< requests preempted while this step's batch was formed
  CapTally caps;                        ///< its DP ranks, and those whose waiting requests a cap held back

  /// kv_used_tokens / kv_capacity_tokens (0 with unlimited KV memory).
  double kv_used_fraction() const {
    return kv_capacity_tokens > 0 ? static_cast<double>(kv_used_tokens) / static_cast<double>(kv_capacity_tokens) : 0.0;
  }
};

class Observer {
 public:
  virtual ~Observer() = default;
  virtual void on_layer(const LayerRecord& /*layer*/) {}
  virtual void on_step(const StepRecord& /*step*/) {}
  /// Expert weights of `group` moving during [start_ns, end_ns): each compute-phase interval, or a whole
  /// network migration (stop-the-world or overlapped) when its last transfer lands.
  virtual void on_migration(int /*group*/, core::Time /*start_ns*/, core::Time /*end_ns*/, double /*bytes*/) {}
  /// A request arrived and was given its group and rank (`r.rejected`: it can never fit).
  virtual void on_arrival(const RequestState& /*r*/) {}
  /// The workload has no request after the one that arrived at `last_arrival_ns`.
  virtual void on_arrivals_end(core::Time /*last_arrival_ns*/) {}
  /// A running request was preempted (recompute) at `now_ns`, while its group formed a batch.
  virtual void on_preemption(const RequestState& /*r*/, core::Time /*now_ns*/) {}
  /// `group`'s trigger decided a new placement at `time_ns` and its migration starts.
  virtual void on_rebalance(int /*group*/, core::Time /*time_ns*/, policies::RebalanceKind /*kind*/) {}
  /// A request's first token (end of its prefill).
  virtual void on_first_token(const RequestState& /*r*/) {}
  /// A decode token after the first: `gap_ns` since the request's previous token.
  virtual void on_token(const RequestState& /*r*/, core::Time /*gap_ns*/) {}
  /// Speculative decoding: a decode verified `drafted` draft tokens and accepted `accepted` of them (its
  /// accepted + 1 tokens follow as on_token calls).
  virtual void on_verify(const RequestState& /*r*/, std::int64_t /*drafted*/, std::int64_t /*accepted*/) {}
  virtual void on_request_finished(const RequestState& /*r*/) {}
};

}  // namespace epsim::serving
