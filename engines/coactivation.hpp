// SPDX-License-Identifier: Apache-2.0
#pragma once
// Expert pairs tallied from per-token routing. Co-selection counts (GRACE's affinity): for every token and
// MoE layer, each ordered pair of distinct experts it chose counts once, into [layer][expert][expert];
// written as CSV layer,expert_a,expert_b,tokens (each unordered pair once), the form `epsim place
// --coactivation` reads. Cross-layer transitions (MoETuner's token routing dependency): for every token and
// pair of consecutive MoE layers l, l + 1, each pair (expert a of its top-k in l, expert b of its top-k in
// l + 1) counts once, into [layer][expert a][expert b] for l = 0 .. L - 2.
#include <string>
#include <vector>

#include "workloads/routing_trace.pb.h"

namespace epsim::engines {

/// What both tallies share: the shape and the counts, [block][expert][expert].
class PairTally {
 public:
  const std::vector<double>& counts() const { return counts_; }

 protected:
  PairTally(const trace::Header& h, std::size_t blocks);
  std::size_t experts_ = 0;
  std::size_t top_k_ = 0;
  std::vector<double> counts_;
};

class CoactivationTally : public PairTally {
 public:
  explicit CoactivationTally(const trace::Header& h);
  /// Adds a step's per-token ids (a step without them adds nothing).
  void add(const trace::Step& s);
};

class TransitionTally : public PairTally {
 public:
  explicit TransitionTally(const trace::Header& h);
  /// Adds a step's per-token ids (a step without them, or a layer pair listing different token counts,
  /// adds nothing there).
  void add(const trace::Step& s);
};

/// [layer][expert][expert] counts as CSV rows layer,expert_a,expert_b,tokens for a < b with tokens > 0.
std::string coactivation_csv(const std::vector<double>& counts, std::size_t layers, std::size_t experts);

}  // namespace epsim::engines
