// SPDX-License-Identifier: Apache-2.0
#pragma once
// Synthetic routing whose statistics follow what the papers observed (docs/workloads.md):
// - per MoE layer, Zipf-like popularity p ~ 1 / rank^s over a layer-specific random ranking (its own hot
//   set); the hot experts are the *consistent* ones, active in most steps (GEM); s = 0.4 puts the
//   hottest of 128 experts at about 4.2x the uniform share, as GEM measured on Qwen3-235B;
// - *topics*: each request draws a topic at arrival; a topic perturbs every expert's popularity by a
//   lognormal factor (spread `topic_spread`), so batches with different topic mixes route differently;
// - *drift*: the topic mix moves over time (a scheduled shift from one mix to another, or a random walk
//   of its logits), for ViBE's and DIRECTOR's dynamic studies;
// - *temporal* experts: groups that fire together in bursts (a two-state Markov chain per group) and are
//   silent otherwise; in a burst each member takes `burst_multiplier` x the uniform share (GEM: Llama-4-
//   Scout's experts 0 and 3, correlated at r = 0.88, active in ~17 % of steps with ~3x tokens);
// - *phases*: decode tokens may follow a different skew than prefill tokens.
// Every topic x phase distribution is capped at 1 / top_k (a token picks distinct experts, so no expert
// can take more than all of a topic's tokens); a step's distribution mixes them by the step's tokens and
// draws one multinomial of tokens x top_k picks.
#include <optional>
#include <string>
#include <vector>

#include "core/params.hpp"
#include "core/random_streams.hpp"
#include "workloads/multinomial.hpp"
#include "workloads/poisson_multinomial.hpp"
#include "workloads/routing_source.hpp"

namespace epsim::workloads {

struct SyntheticRouterConfig {
  double zipf_exponent = 0.4;                  ///< prefill skew s in p ~ 1 / rank^s (0 = uniform)
  std::optional<double> decode_zipf_exponent;  ///< decode skew (none: the prefill's)
  int topics = 4;                              ///< request topics
  /// Origins of a layer's tokens per expert: "independent" (the engine assumes every GPU's tokens spread
  /// like the whole batch's) or "requests" (each GPU's share of an expert follows the topics and phases
  /// of the requests it serves, so origin and expert correlate: GRACE's and DIRECTOR's locality).
  bool origin_aware = false;
  double topic_spread = 0.5;      ///< std of the log popularity factor between topics (0 = identical)
  std::vector<double> topic_mix;  ///< initial mix (empty = uniform)
  enum class Drift : std::uint8_t { none, shift, random_walk };
  Drift drift = Drift::none;
  std::vector<double> drift_target_mix;  ///< shift: the mix after the shift (empty = all on the last topic)
  double drift_start_s = 10.0;           ///< shift: when the shift starts
  double drift_duration_s = 10.0;        ///< shift: how long it takes (linear)
  double drift_strength = 1.0;           ///< random walk: stationary std of each topic logit
  double drift_time_constant_s = 30.0;   ///< random walk: mean-reversion time
  int temporal_groups = 0;               ///< bursty groups per layer
  int temporal_group_size = 2;
  double burst_fraction = 0.17;                       ///< share of steps a group is bursting
  double burst_mean_steps = 4.0;                      ///< mean burst length in steps
  double burst_multiplier = 3.0;                      ///< in a burst, each member takes this x the uniform share
  RoutingSampling sampling = RoutingSampling::exact;  ///< how a layer's many picks are drawn (docs/workloads.md)
};

SyntheticRouterConfig parse_synthetic_router(core::ParamTable& t);

/// Zipf weights 1 / rank^s for ranks 1..n, capped at 1 / top_k after normalisation (water-filling).
std::vector<double> capped_zipf_probabilities(int n, double exponent, int top_k);

class SyntheticRouter final : public RoutingSource {
 public:
  SyntheticRouter(const SyntheticRouterConfig& cfg, int moe_layers, int experts, int top_k,
                  const core::RandomStreams& streams);
  int num_moe_layers() const override { return layers_; }
  int num_experts() const override { return experts_; }
  int top_k() const override { return top_k_; }
  void begin_step(const StepContext& ctx) override;
  void sample(int layer, std::int64_t tokens, std::span<std::int32_t> tokens_per_expert) override;

  /// Layer draws served from the prebuilt topic x phase tables so far (the rest mixed a table per draw).
  std::int64_t table_draws() const { return table_draws_; }
  /// Expert ids of `layer` from most to least popular (by the base Zipf ranking).
  std::span<const int> ranking(int layer) const;
  /// The base (topic-free, burst-free) prefill probabilities by rank, and the decode ones.
  std::span<const double> sorted_probabilities() const { return base_p_[0]; }
  /// The temporal groups of `layer` (expert ids, group-major).
  std::span<const int> temporal_experts(int layer) const;
  /// The topic mix at time `t` (shift drift is a function of time; the random walk is its current state).
  std::vector<double> topic_mix(core::Time t) const;
  /// Expected co-selections per token in `layer` (E x E row-major, added to `out`, zero diagonal): a token
  /// of topic t in phase p picks k distinct experts from that topic and phase's distribution q, so
  /// experts i != j are both chosen with probability ~ k (k - 1) q_i q_j (small q); averaged over the
  /// topic mix at `t` and both phases equally. Temporal groups burst per step, not per token, and add
  /// no per-token affinity. GRACE's affinity for synthetic routing (tests: the planted topics).
  void expected_coselection(int layer, core::Time t, std::span<double> out) const;
  /// Adds to `out` (experts x experts, row-major) the expected cross-layer transitions per token from
  /// `layer` to `layer + 1`: a token keeps its topic through the layers, so given topic t and phase p it
  /// picks expert i in one layer and j in the next with probability ~ k q_i x k q'_j; averaged over the
  /// topic mix at `t` and both phases equally. MoETuner's routing dependency for synthetic routing.
  void expected_transitions(int layer, core::Time t, std::span<double> out) const;
  /// Each request's tokens follow its (capped) topic distribution for its phase (bursts aside).
  bool expected_load(std::span<const RequestTokens> requests, std::span<const int> origin, int origins,
                     std::span<double> out) override;
  /// With origin_aware: the last sample()'s counts of `layer` split over the GPUs by what their requests
  /// make likely (largest remainder, ties to the lower GPU).
  bool origin_counts(int layer, int origins, std::int64_t tokens, std::span<std::int32_t> out) override;
  /// Tokens as the topics make them: each topic (in the mix arriving now) and phase (in the step's split)
  /// gets its share of the tokens (largest remainder) and draws them from its own distribution, so
  /// co-selected experts come together (bursts change counts, not which experts a token pairs).
  bool sample_tokens(int layer, TokenSampler& sampler, core::Rng& rng, std::span<std::int32_t> out) override;
  /// The topic of a request (drawn once, from the mix at its arrival). Ids are dense (0, 1, 2, ...): the
  /// cache is indexed by id.
  int topic_of(std::int64_t request_id, core::Time arrival_ns);

 private:
  std::size_t idx(int topic, int phase, int layer) const {
    return ((static_cast<std::size_t>(topic) * 2 + static_cast<std::size_t>(phase)) *
                static_cast<std::size_t>(layers_) +
            static_cast<std::size_t>(layer)) *
           static_cast<std::size_t>(experts_);
  }
  void advance_drift(core::Time now);
  void sample_counts(int layer, std::int64_t tokens, std::span<std::int32_t> out);
  void advance_bursts();

  SyntheticRouterConfig cfg_;
  int layers_;
  int experts_;
  int top_k_;
  std::uint64_t topic_seed_;
  std::vector<double> base_p_[2];  // by rank, per phase
  std::vector<int> ranking_;       // [layer][rank] -> expert
  std::vector<double> dist_;       // [topic][phase][layer][expert], each row sums to 1
  std::vector<int> temporal_;      // [layer][group * size + member] -> expert
  std::vector<bool> is_temporal_;  // [layer][expert]
  std::vector<bool> bursting_;     // [layer][group]
  std::vector<double> logits_;     // random-walk drift state per topic
  core::Time drift_time_ = 0;
  std::vector<std::int8_t> request_topic_;  // by request id; -1 = not drawn yet
  std::vector<double> step_weight_;         // [topic][phase] share of the step's tokens
  std::vector<double> mixed_;               // workspace: this step's distribution for one layer
  std::vector<double> origin_weight_;       // [origin][topic][phase] tokens of the step (origin_aware)
  std::vector<std::int32_t> last_counts_;   // the last sample()'s counts (origin_aware)
  std::vector<double> split_;               // workspace of origin_counts: per origin
  std::vector<std::int32_t> split_share_;   // ... and its whole shares
  void fill_topic_mix(core::Time t, std::span<double> mix) const;
  core::Time step_now_ = 0;
  double step_prefill_share_ = 1.0;
  std::vector<double> mix_;         // workspace of sample_tokens: the topic mix
  std::vector<double> cell_quota_;  // workspace of sample_tokens: [topic][phase]
  std::vector<std::int32_t> cell_tokens_;
  int step_origins_ = 0;
  AliasTable alias_;  // workspace for small draws
  // Small draws without a table per step: every topic x phase x layer distribution has its alias table,
  // built once; a pick chooses the step's cell (by its share of tokens), then the expert from the cell's
  // table. The same distribution as the mixed table while no group of the layer bursts.
  AliasTables cell_alias_;        // [layer][topic][phase]: a layer's tables side by side
  std::vector<int> step_cells_;   // the step's cells with tokens ([topic][phase] index)
  std::vector<double> step_cdf_;  // their cumulative shares
  bool sample_from_cells(int layer, std::int64_t tokens, std::span<std::int32_t> out);
  std::int64_t table_draws_ = 0;
  core::Rng rng_;  // counts
  core::Rng burst_rng_;
  core::Rng drift_rng_;
  PoissonMultinomial poisson_;  // large draws with sampling = "poisson"
};

}  // namespace epsim::workloads
