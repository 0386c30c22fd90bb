// SPDX-License-Identifier: Apache-2.0
#pragma once
// Replays a routing trace: each engine step takes the trace's next step (streamed from disk). When the
// simulated batch has a different token count than the recorded step, the step's expert distribution is
// resampled: one multinomial draw of tokens x top_k picks with the recorded shares (capped at the token
// count), large ones as routing.sampling says. At the end the trace loops or stops (the simulation then ends).
// Per-origin counts, when the trace has them for as many origins as the EP group has GPUs and the token counts match,
// are offered to the engine for the dispatch traffic. For a group-limited model (expert_groups, topk_group) and a trace
// with per-token expert ids, every recorded token's groups are counted on the first pass: a measured
// trace that breaks the limit is still data, so it is reported (group_limit_report), not refused.
#include <optional>
#include <string>
#include <vector>

#include "core/random_streams.hpp"
#include "workloads/group_limit.hpp"
#include "workloads/multinomial.hpp"
#include "workloads/poisson_multinomial.hpp"
#include "workloads/recorded_picks.hpp"
#include "workloads/routing_source.hpp"
#include "workloads/trace_io.hpp"

namespace epsim::workloads {

struct TraceReplayConfig {
  std::string file;
  bool loop = true;       ///< at the end, start again (else the routing source is exhausted)
  int expert_groups = 1;  ///< the model's group limit (from [model], not [routing]); topk_group < expert_groups
  int topk_group = 1;     ///< turns the check on
  /// How a resampled step's large draws are made (routing.sampling, as for synthetic routing).
  RoutingSampling sampling = RoutingSampling::exact;
};

class TraceRoutingSource final : public RoutingSource {
 public:
  /// Throws core::Error if the trace's shape (MoE layers, experts, top-k) differs from the model's.
  TraceRoutingSource(const TraceReplayConfig& cfg, int moe_layers, int experts, int top_k,
                     const core::RandomStreams& streams);
  int num_moe_layers() const override { return static_cast<int>(reader_.header().moe_layers()); }
  int num_experts() const override { return static_cast<int>(reader_.header().experts()); }
  int top_k() const override { return static_cast<int>(reader_.header().top_k()); }
  void begin_step(const StepContext& ctx) override;
  void sample(int layer, std::int64_t tokens, std::span<std::int32_t> tokens_per_expert) override;
  bool origin_counts(int layer, int origins, std::int64_t tokens, std::span<std::int32_t> out) override;
  bool exhausted() const override { return exhausted_; }
  std::int64_t steps_replayed() const { return replayed_; }
  std::int64_t loops() const override { return loops_; }
  GroupLimitReport group_limit_report() const override;

 private:
  TraceReplayConfig cfg_;
  TraceReader reader_;
  trace::Step step_;
  bool exhausted_ = false;
  std::int64_t replayed_ = 0;
  std::int64_t loops_ = 0;
  core::Rng rng_;
  std::vector<double> p_;
  std::vector<int> order_;
  AliasTable alias_;
  RecordedPicks recorded_;
  PoissonMultinomial poisson_;
  std::optional<GroupLimitCounter> groups_;  ///< set when the model is group limited and the trace has ids
  GroupLimitReport group_report_;
};

}  // namespace epsim::workloads
