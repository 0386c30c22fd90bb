// SPDX-License-Identifier: Apache-2.0
#pragma once
// Co-selection counts (GRACE's affinity) tallied from per-token routing: for every token and MoE layer,
// each ordered pair of distinct experts it chose counts once, into [layer][expert][expert]. Written as CSV
// layer,expert_a,expert_b,tokens (each unordered pair once), the form `epsim place --coactivation` reads.
#include <string>
#include <vector>

#include "workloads/routing_trace.pb.h"

namespace epsim::engines {

class CoactivationTally {
 public:
  explicit CoactivationTally(const trace::Header& h);
  /// Adds a step's per-token ids (a step without them adds nothing).
  void add(const trace::Step& s);
  const std::vector<double>& counts() const { return counts_; }

 private:
  std::size_t experts_ = 0;
  std::size_t top_k_ = 0;
  std::vector<double> counts_;
};

/// [layer][expert][expert] counts as CSV rows layer,expert_a,expert_b,tokens for a < b with tokens > 0.
std::string coactivation_csv(const std::vector<double>& counts, std::size_t layers, std::size_t experts);

}  // namespace epsim::engines
