// SPDX-License-Identifier: Apache-2.0
#pragma once
// Two-batch overlap (SGLang's TBO, DeepSeek's dual micro-batch): a step's batch is split in two halves
// (split_batch), each priced as its own pass through the layers; the GPU then runs them on two
// streams, one computing (local work, experts), one communicating (dispatch, combine), so one half's
// dispatch or combine runs under the other half's computation. Each stream runs its operations in a
// fixed order, each operation starting when its stream is free and its inputs are ready:
//   compute:  A0(l) A1(l) E0(l) E1(l) A0(l+1) ...     (A: local work before MoE layer l, E: experts)
//   comm:     D0(l) D1(l) C0(l) C1(l) D0(l+1) ...     (D: dispatch, C: combine)
//   D_m(l) after A_m(l); E_m(l) after D_m(l); C_m(l) after E_m(l); A_m(l+1) after C_m(l); the tails
//   (LM head) after the last combine. The step ends when both halves' tails end.
#include <span>
#include <utility>
#include <vector>

#include "sim/batch.hpp"

namespace epsim::serving {

/// One half's times for one MoE layer (slowest GPU for the compute phases), ns.
struct HalfLayer {
  double local_ns = 0.0;
  double dispatch_ns = 0.0;
  double expert_ns = 0.0;
  double combine_ns = 0.0;
};

struct OverlapTimeline {
  double end_ns = 0.0;
  /// Compute-stream busy intervals [start, end) from the step's start, in order.
  std::vector<std::pair<double, double>> compute;
  std::vector<double> layer_start;  ///< per MoE layer: when half 0's local work before it starts
};

/// Schedules the two halves (equal numbers of layers) and their tails; `out.compute` is cleared and
/// refilled (its capacity reused).
void schedule_two_batches(std::span<const HalfLayer> a, std::span<const HalfLayer> b, double tail_a_ns,
                          double tail_b_ns, OverlapTimeline& out);

/// Splits every rank's entries into two halves of (nearly) equal tokens: a prefill chunk of t tokens
/// gives its first ceil(t / 2) to half 0 and the rest to half 1 (which then emits its token), decodes
/// alternate between the halves, starting with the one with fewer tokens. `out` buffers are reused.
void split_batch(const Batch& batch, Batch& half0, Batch& half1);

}  // namespace epsim::serving
