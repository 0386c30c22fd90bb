// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where the per-step expert loads come from: a synthetic generator or a replayed trace. For each engine
// step the engine first calls begin_step() with what the batch is made of, then, for each MoE layer in
// order, sample() for the token-expert counts of the step's tokens.
#include <cstdint>
#include <span>

#include "core/random_streams.hpp"
#include "core/time.hpp"
#include "workloads/token_sampler.hpp"

namespace epsim::workloads {

/// What a replayed trace's per-token expert ids showed against the model's group limit (DeepSeek-V3's
/// topk_group of expert_groups): counted over the trace's first pass only, so a looping trace's tokens
/// count once.
struct GroupLimitReport {
  std::int64_t tokens_checked = 0;     ///< token x MoE layer pairs
  std::int64_t tokens_over_limit = 0;  ///< of those, reaching more groups than the limit
  int max_groups = 0;
  std::int64_t first_step = -1;  ///< the trace's step index and MoE layer of the first token over the limit
  int first_layer = -1;
};

/// One request's share of a step.
struct RequestTokens {
  std::int64_t request_id = 0;
  core::Time arrival_ns = 0;
  std::int64_t tokens = 0;
  bool prefill = false;
  int origin = -1;  ///< GPU of the EP group its tokens start from (-1 = unknown)
};

struct StepContext {
  core::Time now_ns = 0;
  std::int64_t tokens = 0;  ///< all tokens of the step (every rank of the EP group)
  std::int64_t prefill_tokens = 0;
  std::int64_t decode_tokens = 0;
  std::span<const RequestTokens> requests;  ///< may be empty when the caller has no per-request view
};

class RoutingSource {
 public:
  virtual ~RoutingSource() = default;
  virtual int num_moe_layers() const = 0;
  virtual int num_experts() const = 0;
  virtual int top_k() const = 0;
  /// Starts a step.
  virtual void begin_step(const StepContext& /*ctx*/) {}
  /// Fills `tokens_per_expert` (size num_experts) with the token-expert assignments of `tokens` tokens
  /// in MoE layer `layer` (0-based among MoE layers) for the current step; counts sum to tokens * top_k
  /// and none exceeds `tokens` (a token picks distinct experts).
  virtual void sample(int layer, std::int64_t tokens, std::span<std::int32_t> tokens_per_expert) = 0;
  /// Tokens per (origin GPU, expert) of `layer` in the current step, row-major into `out` (size
  /// origins x experts), when the source knows where tokens come from for exactly `origins` GPUs and
  /// `tokens` tokens; false otherwise (the engine then assumes origins follow where requests live).
  virtual bool origin_counts(int /*layer*/, int /*origins*/, std::int64_t /*tokens*/, std::span<std::int32_t> /*out*/) {
    return false;
  }
  /// The expected routing of `requests` (each with its tokens to come) on their origin GPUs: adds to
  /// `out` ([layer][origin][expert] row-major, `origins` GPUs) tokens x top_k x each expert's probability
  /// for that request. False when the source cannot say (a replayed trace): a proactive policy's oracle.
  virtual bool expected_load(std::span<const RequestTokens> /*requests*/, std::span<const int> /*origin*/,
                             int /*origins*/, std::span<double> /*out*/) {
    return false;
  }
  /// Fills `out` (tokens x top_k expert ids, token-major) with representative tokens of the current step
  /// in `layer` from the source's own per-token model, drawing through `sampler` (which holds the model's
  /// group limit); false when the source has none (the caller then draws from the step's counts).
  virtual bool sample_tokens(int /*layer*/, TokenSampler& /*sampler*/, core::Rng& /*rng*/,
                             std::span<std::int32_t> /*out*/) {
    return false;
  }
  /// True when a replayed trace has ended and is not looping: no further step can be routed.
  virtual bool exhausted() const { return false; }
  /// How many times a replayed trace started again from its beginning (0 for generated routing).
  virtual std::int64_t loops() const { return 0; }
  /// A replayed trace's group-limit check (all zero when unchecked: generated routing, a model without a
  /// group limit, or a trace without per-token expert ids).
  virtual GroupLimitReport group_limit_report() const { return {}; }
};

}  // namespace epsim::workloads
