// SPDX-License-Identifier: Apache-2.0
#include "workloads/synthetic_router.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <boost/random/bernoulli_distribution.hpp>
#include <boost/random/binomial_distribution.hpp>
#include <boost/random/normal_distribution.hpp>
#include <boost/random/uniform_01.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <cmath>
#include <numeric>

#include "core/apportion.hpp"
#include "core/error.hpp"
#include "workloads/multinomial.hpp"

namespace epsim::workloads {

SyntheticRouterConfig parse_synthetic_router(core::ParamTable& t) {
  using Drift = SyntheticRouterConfig::Drift;
  static constexpr std::array<core::Choice<Drift>, 3> k_drifts{
      {{"none", Drift::none}, {"shift", Drift::shift}, {"random_walk", Drift::random_walk}}};
  SyntheticRouterConfig c;
  c.zipf_exponent =
      t.real("zipf_exponent", c.zipf_exponent,
             "prefill skew: p ~ 1 / rank^s (0 = uniform; 0.4 = hottest of 128 at ~4.2x uniform)", {0.0, 10.0});
  c.decode_zipf_exponent = t.optional_real("decode_zipf_exponent", "the prefill's", "decode skew", {0.0, 10.0});
  c.topics = static_cast<int>(t.integer("topics", c.topics, "request topics", {1, 64}));
  static constexpr std::array<core::Choice<bool>, 2> k_origins{{{"independent", false}, {"requests", true}}};
  c.origin_aware = t.choice<bool>("origins", false,
                                  "where an expert's tokens come from: independent = every GPU like the whole batch; "
                                  "requests = each GPU by the topics of the requests it serves",
                                  k_origins);
  c.topic_spread =
      t.real("topic_spread", c.topic_spread, "std of the log popularity factor between topics", {0.0, 5.0});
  c.topic_mix = t.real_list("topic_mix", "initial topic mix (empty = uniform)", core::k_non_negative);
  c.drift = t.choice<Drift>("drift", Drift::none, "how the topic mix moves over time", k_drifts);
  c.drift_target_mix = t.real_list("drift_target_mix", "shift: the mix after the shift (empty = all on the last topic)",
                                   core::k_non_negative);
  c.drift_start_s = t.real("drift_start_s", c.drift_start_s, "shift: start time, s", core::k_time_s);
  c.drift_duration_s = t.real("drift_duration_s", c.drift_duration_s, "shift: duration, s", core::k_time_s);
  c.drift_strength =
      t.real("drift_strength", c.drift_strength, "random walk: std of each topic logit", core::k_non_negative);
  c.drift_time_constant_s = t.real("drift_time_constant_s", c.drift_time_constant_s,
                                   "random walk: mean-reversion time, s", core::k_positive_time_s);
  c.temporal_groups = static_cast<int>(t.integer("temporal_groups", 0, "bursty expert groups per layer", {0, 1024}));
  c.temporal_group_size = static_cast<int>(t.integer("temporal_group_size", 2, "experts per bursty group", {1, 64}));
  c.burst_fraction = t.real("burst_fraction", c.burst_fraction, "share of steps a group bursts", {0.0, 1.0, true});
  c.burst_mean_steps = t.real("burst_mean_steps", c.burst_mean_steps, "mean burst length in steps", {1.0, 1e6});
  static constexpr std::array<core::Choice<RoutingSampling>, 3> k_sampling{
      {{"exact", RoutingSampling::exact}, {"poisson", RoutingSampling::poisson}, {"fast", RoutingSampling::fast}}};
  c.sampling = t.choice<RoutingSampling>(
      "sampling", RoutingSampling::exact,
      "large multinomial draws: exact (conditional binomials), poisson (exact too, Poissonised and vectorised: "
      "other random numbers, faster with AVX2 or AVX-512), or fast (conditional binomials of variance >= 25 from their "
      "moment-matched normal, approximate)",
      k_sampling);
  c.burst_multiplier = t.real("burst_multiplier", c.burst_multiplier,
                              "in a burst each member takes this x the uniform share", core::k_positive);
  if (t.documenting()) {
    return c;
  }
  if (!c.topic_mix.empty() && static_cast<int>(c.topic_mix.size()) != c.topics) {
    t.fail("topic_mix", fmt::format("expected one weight per topic ({}), got {}", c.topics, c.topic_mix.size()));
  }
  if (!c.drift_target_mix.empty() && static_cast<int>(c.drift_target_mix.size()) != c.topics) {
    t.fail("drift_target_mix",
           fmt::format("expected one weight per topic ({}), got {}", c.topics, c.drift_target_mix.size()));
  }
  if (c.burst_fraction >= 1.0 / (1.0 + 1.0 / c.burst_mean_steps) && c.temporal_groups > 0) {
    // P(start) = f / (1 - f) / L must stay a probability.
    t.fail("burst_fraction", "too large for burst_mean_steps (bursts would have to start more than always)");
  }
  return c;
}

std::vector<double> capped_zipf_probabilities(int n, double exponent, int top_k) {
  std::vector<double> p(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    p[static_cast<std::size_t>(r)] = std::pow(static_cast<double>(r + 1), -exponent);
  }
  const double sum = std::accumulate(p.begin(), p.end(), 0.0);
  for (double& x : p) {
    x /= sum;
  }
  water_fill_cap(p, 1.0 / static_cast<double>(top_k));
  return p;
}

namespace {
std::vector<double> normalised(std::vector<double> v, int n) {
  if (v.empty()) {
    v.assign(static_cast<std::size_t>(n), 1.0);
  }
  const double sum = std::accumulate(v.begin(), v.end(), 0.0);
  for (double& x : v) {
    x = sum > 0.0 ? x / sum : 1.0 / static_cast<double>(n);
  }
  return v;
}
}  // namespace

SyntheticRouter::SyntheticRouter(const SyntheticRouterConfig& cfg, int moe_layers, int experts, int top_k,
                                 const core::RandomStreams& streams)
    : cfg_(cfg),
      layers_(moe_layers),
      experts_(experts),
      top_k_(top_k),
      topic_seed_(streams.stream_seed("routing-topics", 1)),
      ranking_(static_cast<std::size_t>(moe_layers) * static_cast<std::size_t>(experts)),
      rng_(streams.stream("routing")),
      burst_rng_(streams.stream("routing-bursts")),
      drift_rng_(streams.stream("routing-drift")),
      poisson_(cfg.sampling) {
  if (top_k < 1 || top_k > experts) {
    throw core::Error("SyntheticRouter: need 1 <= top_k <= experts");
  }
  if (cfg_.temporal_groups * cfg_.temporal_group_size > experts / 2) {
    throw core::Error(fmt::format("synthetic routing: {} temporal groups of {} experts exceed half of the {} experts",
                                  cfg_.temporal_groups, cfg_.temporal_group_size, experts));
  }
  cfg_.topic_mix = normalised(cfg_.topic_mix, cfg_.topics);
  if (cfg_.drift_target_mix.empty()) {
    cfg_.drift_target_mix.assign(static_cast<std::size_t>(cfg_.topics), 0.0);
    cfg_.drift_target_mix.back() = 1.0;
  }
  cfg_.drift_target_mix = normalised(cfg_.drift_target_mix, cfg_.topics);
  const double decode_s = cfg_.decode_zipf_exponent.value_or(cfg_.zipf_exponent);
  base_p_[0] = capped_zipf_probabilities(experts, cfg_.zipf_exponent, top_k);
  base_p_[1] = capped_zipf_probabilities(experts, decode_s, top_k);

  // Each layer's hot set: a Fisher-Yates shuffle from a stream of its own.
  core::Rng layout = streams.stream("routing-layout");
  for (int l = 0; l < layers_; ++l) {
    auto first = ranking_.begin() + static_cast<std::ptrdiff_t>(l) * experts;
    std::iota(first, first + experts, 0);
    for (int i = experts - 1; i > 0; --i) {
      const int j = boost::random::uniform_int_distribution<int>(0, i)(layout);
      std::swap(first[i], first[j]);
    }
  }
  // Temporal groups: consecutive experts from a quarter down the ranking (warm, not the hottest).
  const int members = cfg_.temporal_groups * cfg_.temporal_group_size;
  is_temporal_.assign(static_cast<std::size_t>(layers_) * static_cast<std::size_t>(experts), false);
  for (int l = 0; l < layers_; ++l) {
    for (int m = 0; m < members; ++m) {
      const int e = ranking(l)[static_cast<std::size_t>(experts / 4) + static_cast<std::size_t>(m)];
      temporal_.push_back(e);
      is_temporal_[static_cast<std::size_t>(l) * static_cast<std::size_t>(experts) + static_cast<std::size_t>(e)] =
          true;
    }
  }
  // Topic x phase x layer distributions.
  core::Rng topic_rng = streams.stream("routing-topics");
  boost::random::normal_distribution<double> n01;
  dist_.assign(
      static_cast<std::size_t>(cfg_.topics) * 2 * static_cast<std::size_t>(layers_) * static_cast<std::size_t>(experts),
      0.0);
  std::vector<double> factor(static_cast<std::size_t>(experts));
  const double sd = cfg_.topic_spread;
  for (int t = 0; t < cfg_.topics; ++t) {
    for (int l = 0; l < layers_; ++l) {
      for (double& f : factor) {
        f = std::exp(sd * n01(topic_rng) - sd * sd / 2.0);
      }
      for (int ph = 0; ph < 2; ++ph) {
        double* row = &dist_[idx(t, ph, l)];
        for (int r = 0; r < experts; ++r) {
          const int e = ranking(l)[static_cast<std::size_t>(r)];
          const bool temporal = is_temporal_[static_cast<std::size_t>(l) * static_cast<std::size_t>(experts) +
                                             static_cast<std::size_t>(e)];
          row[e] = temporal ? 0.0 : base_p_[ph][static_cast<std::size_t>(r)] * factor[static_cast<std::size_t>(e)];
        }
        const double sum = std::accumulate(row, row + experts, 0.0);
        for (int e = 0; e < experts; ++e) {
          row[e] /= sum;
        }
        // Every token of this topic and phase picks top_k distinct experts, so none can be picked by more
        // than all of them: the cap holds per cell, and then for any mix of cells too.
        water_fill_cap(std::span<double>(row, static_cast<std::size_t>(experts)), 1.0 / static_cast<double>(top_k));
      }
    }
  }
  const std::size_t cells = static_cast<std::size_t>(cfg_.topics) * 2;
  cell_alias_.resize(cells * static_cast<std::size_t>(layers_), static_cast<std::size_t>(experts));
  for (std::size_t c = 0; c < cells * static_cast<std::size_t>(layers_); ++c) {
    const std::span<const double> row(&dist_[c * static_cast<std::size_t>(experts)], static_cast<std::size_t>(experts));
    const std::size_t layer = c % static_cast<std::size_t>(layers_);
    cell_alias_.set(layer * cells + c / static_cast<std::size_t>(layers_), row);
  }
  // Bursts start from their stationary distribution.
  bursting_.resize(static_cast<std::size_t>(layers_) * static_cast<std::size_t>(cfg_.temporal_groups));
  boost::random::bernoulli_distribution<double> on(cfg_.burst_fraction);
  for (auto&& bursting : bursting_) {
    bursting = on(burst_rng_);
  }
  logits_.assign(static_cast<std::size_t>(cfg_.topics), 0.0);
  step_weight_.assign(static_cast<std::size_t>(cfg_.topics) * 2, 0.0);
  step_cells_.reserve(step_weight_.size());
  step_cdf_.reserve(step_weight_.size());
  mixed_.resize(static_cast<std::size_t>(experts));
}

std::span<const int> SyntheticRouter::ranking(int layer) const {
  return {ranking_.data() + static_cast<std::size_t>(layer) * static_cast<std::size_t>(experts_),
          static_cast<std::size_t>(experts_)};
}

std::span<const int> SyntheticRouter::temporal_experts(int layer) const {
  const auto members =
      static_cast<std::size_t>(cfg_.temporal_groups) * static_cast<std::size_t>(cfg_.temporal_group_size);
  return {temporal_.data() + static_cast<std::size_t>(layer) * members, members};
}

std::vector<double> SyntheticRouter::topic_mix(core::Time t) const {
  std::vector<double> mix(cfg_.topic_mix.size());
  fill_topic_mix(t, mix);
  return mix;
}

void SyntheticRouter::fill_topic_mix(core::Time t, std::span<double> mix) const {
  using D = SyntheticRouterConfig::Drift;
  std::copy(cfg_.topic_mix.begin(), cfg_.topic_mix.end(), mix.begin());
  if (cfg_.drift == D::shift) {
    const double s = core::to_seconds(t);
    const double f = cfg_.drift_duration_s > 0.0
                         ? std::clamp((s - cfg_.drift_start_s) / cfg_.drift_duration_s, 0.0, 1.0)
                         : (s >= cfg_.drift_start_s ? 1.0 : 0.0);
    for (std::size_t i = 0; i < mix.size(); ++i) {
      mix[i] = (1.0 - f) * mix[i] + f * cfg_.drift_target_mix[i];
    }
  } else if (cfg_.drift == D::random_walk) {
    double sum = 0.0;
    for (std::size_t i = 0; i < mix.size(); ++i) {
      mix[i] = mix[i] * std::exp(logits_[i]);
      sum += mix[i];
    }
    for (double& x : mix) {
      x /= sum;
    }
  }
}

int SyntheticRouter::topic_of(std::int64_t request_id, core::Time arrival_ns) {
  const auto id = static_cast<std::size_t>(request_id);
  if (id < request_topic_.size() && request_topic_[id] >= 0) {
    return request_topic_[id];
  }
  if (id >= request_topic_.size()) {
    request_topic_.resize(std::max(id + 1, request_topic_.size() * 2), -1);
  }
  // Each request's own generator, so the topic does not depend on the order requests are first seen.
  core::Rng r(core::mix64(topic_seed_ ^ core::mix64(static_cast<std::uint64_t>(request_id))));
  const double u = boost::random::uniform_01<double>()(r);
  const std::vector<double> mix = topic_mix(arrival_ns);
  int topic = 0;
  double acc = mix[0];
  while (u >= acc && topic + 1 < cfg_.topics) {
    acc += mix[static_cast<std::size_t>(++topic)];
  }
  request_topic_[id] = static_cast<std::int8_t>(topic);
  return topic;
}

void SyntheticRouter::advance_drift(core::Time now) {
  if (cfg_.drift != SyntheticRouterConfig::Drift::random_walk || now <= drift_time_) {
    return;
  }
  const double decay = std::exp(-core::to_seconds(now - drift_time_) / cfg_.drift_time_constant_s);
  const double noise = cfg_.drift_strength * std::sqrt(1.0 - decay * decay);
  boost::random::normal_distribution<double> n01;
  for (double& x : logits_) {
    x = x * decay + noise * n01(drift_rng_);
  }
  drift_time_ = now;
}

void SyntheticRouter::advance_bursts() {
  if (cfg_.temporal_groups == 0) {
    return;
  }
  // Two-state Markov chain: a burst ends with probability 1 / L, starts with f / (1 - f) / L, so the
  // stationary share of bursting steps is f and bursts last L steps on average.
  const double p_end = 1.0 / cfg_.burst_mean_steps;
  const double p_start = cfg_.burst_fraction / (1.0 - cfg_.burst_fraction) * p_end;
  boost::random::uniform_01<double> u;
  for (auto&& bursting : bursting_) {
    const double x = u(burst_rng_);
    bursting = bursting ? x >= p_end : x < p_start;
  }
}

void SyntheticRouter::begin_step(const StepContext& ctx) {
  step_now_ = ctx.now_ns;
  step_prefill_share_ =
      ctx.tokens > 0 ? static_cast<double>(ctx.prefill_tokens) / static_cast<double>(ctx.tokens) : 1.0;
  advance_drift(ctx.now_ns);
  advance_bursts();
  std::fill(step_weight_.begin(), step_weight_.end(), 0.0);
  step_origins_ = 0;
  if (cfg_.origin_aware) {
    std::fill(origin_weight_.begin(), origin_weight_.end(), 0.0);
  }
  if (!ctx.requests.empty()) {
    for (const RequestTokens& r : ctx.requests) {
      const int t = topic_of(r.request_id, r.arrival_ns);
      const std::size_t tp = static_cast<std::size_t>(t) * 2 + (r.prefill ? 0 : 1);
      step_weight_[tp] += static_cast<double>(r.tokens);
      if (cfg_.origin_aware && r.origin >= 0) {
        const std::size_t width = static_cast<std::size_t>(cfg_.topics) * 2;
        if (origin_weight_.size() < (static_cast<std::size_t>(r.origin) + 1) * width) {
          origin_weight_.resize((static_cast<std::size_t>(r.origin) + 1) * width, 0.0);  // grows once
        }
        origin_weight_[static_cast<std::size_t>(r.origin) * width + tp] += static_cast<double>(r.tokens);
        step_origins_ = std::max(step_origins_, r.origin + 1);
      }
    }
  } else {
    // No per-request view: the current mix, split by phase.
    const std::vector<double> mix = topic_mix(ctx.now_ns);
    const double prefill =
        ctx.tokens > 0 ? static_cast<double>(ctx.prefill_tokens) / static_cast<double>(ctx.tokens) : 1.0;
    for (std::size_t t = 0; t < mix.size(); ++t) {
      step_weight_[t * 2] = mix[t] * prefill;
      step_weight_[t * 2 + 1] = mix[t] * (1.0 - prefill);
    }
  }
  const double sum = std::accumulate(step_weight_.begin(), step_weight_.end(), 0.0);
  if (sum <= 0.0) {
    step_weight_[0] = 1.0;
  } else {
    for (double& w : step_weight_) {
      w /= sum;
    }
  }
  step_cells_.clear();
  step_cdf_.clear();
  double cdf = 0.0;
  for (std::size_t c = 0; c < step_weight_.size(); ++c) {
    if (step_weight_[c] > 0.0) {
      cdf += step_weight_[c];
      step_cells_.push_back(static_cast<int>(c));
      step_cdf_.push_back(cdf);
    }
  }
}

namespace {
constexpr std::int64_t k_cell_picks_per_expert = 8;
}  // namespace

bool SyntheticRouter::sample_from_cells(int layer, std::int64_t tokens, std::span<std::int32_t> out) {
  const std::int64_t picks = tokens * top_k_;
  // Up to about 8 picks per expert a pick (one 64-bit output) costs less than a conditional binomial per
  // expert (measured on DeepSeek-V3's 256 experts: bench/step_loop_bench); past it, binomials of the mix.
  if (picks > k_cell_picks_per_expert * static_cast<std::int64_t>(experts_)) {
    return false;
  }
  if (cfg_.temporal_groups > 0) {
    const auto g0 = static_cast<std::size_t>(layer) * static_cast<std::size_t>(cfg_.temporal_groups);
    for (std::size_t g = 0; g < static_cast<std::size_t>(cfg_.temporal_groups); ++g) {
      if (bursting_[g0 + g]) {
        return false;  // a burst reshapes the mix
      }
    }
  }
  // Picks per cell: conditional binomials over the step's cells; then each cell's picks from its table.
  std::int64_t remaining = picks;
  double tail = step_cdf_.back();
  std::size_t cell = 0;
  const auto next_cell_count = [&] {
    const double w = step_weight_[static_cast<std::size_t>(step_cells_[cell])];
    const double q = cell + 1 == step_cells_.size() || tail <= 0.0 ? 1.0 : std::min(w / tail, 1.0);
    tail -= w;
    const std::int64_t n =
        q >= 1.0 ? remaining : boost::random::binomial_distribution<std::int64_t, double>(remaining, q)(rng_);
    remaining -= n;
    return n;
  };
  // Cell by cell, in the order a pick-by-pick loop would draw (a cell's count as its first pick is due):
  // within a cell every pick reads the same table.
  std::fill(out.begin(), out.end(), 0);
  const std::size_t first_table = static_cast<std::size_t>(layer) * step_weight_.size();
  const int bits = cell_alias_.bits();
  std::int64_t drawn = 0;
  do {
    const std::int64_t n = next_cell_count();
    const std::uint64_t* columns = cell_alias_.columns(first_table + static_cast<std::size_t>(step_cells_[cell]));
    for (std::int64_t i = 0; i < n; ++i) {
      ++out[static_cast<std::size_t>(alias_pick(columns, bits, rng_()))];
    }
    drawn += n;
    ++cell;
  } while (drawn < picks);
  // A count stops at the step's tokens and the picks past it overflow, whatever their order: clip once.
  std::int64_t overflow = 0;
  for (std::int32_t& c : out) {
    const std::int64_t excess = std::max<std::int64_t>(c - tokens, 0);
    overflow += excess;
    c -= static_cast<std::int32_t>(excess);
  }
  place_overflow(overflow, tokens, ranking(layer), out);
  ++table_draws_;
  return true;
}

void SyntheticRouter::sample(int layer, std::int64_t tokens, std::span<std::int32_t> out) {
  sample_counts(layer, tokens, out);
  if (cfg_.origin_aware) {
    last_counts_.assign(out.begin(), out.end());  // origin_counts() splits these
  }
}

bool SyntheticRouter::sample_tokens(int layer, TokenSampler& sampler, core::Rng& rng, std::span<std::int32_t> out) {
  const auto k = static_cast<std::size_t>(top_k_);
  const std::size_t tokens = out.size() / k;
  cell_quota_.resize(step_weight_.size());
  cell_tokens_.resize(step_weight_.size());
  mix_.resize(static_cast<std::size_t>(cfg_.topics));
  // The topics as they arrive now (not this step's few requests), in the step's phases: the sample must
  // hold every expert a later step may load, with the company it keeps.
  fill_topic_mix(step_now_, mix_);
  for (std::size_t t = 0; t < mix_.size(); ++t) {
    cell_quota_[t * 2] = mix_[t] * step_prefill_share_ * static_cast<double>(tokens);
    cell_quota_[t * 2 + 1] = mix_[t] * (1.0 - step_prefill_share_) * static_cast<double>(tokens);
  }
  core::apportion(static_cast<std::int64_t>(tokens), cell_quota_, cell_tokens_);
  std::size_t next = 0;
  for (int t = 0; t < cfg_.topics; ++t) {
    for (int ph = 0; ph < 2; ++ph) {
      const std::int32_t n = cell_tokens_[static_cast<std::size_t>(t) * 2 + static_cast<std::size_t>(ph)];
      if (n == 0) {
        continue;
      }
      sampler.set_weights(std::span<const double>(&dist_[idx(t, ph, layer)], static_cast<std::size_t>(experts_)));
      for (std::int32_t i = 0; i < n; ++i) {
        sampler.draw(rng, out.subspan(next * k, k));
        ++next;
      }
    }
  }
  return true;
}

void SyntheticRouter::sample_counts(int layer, std::int64_t tokens, std::span<std::int32_t> out) {
  if (sample_from_cells(layer, tokens, out)) {
    return;
  }
  std::fill(mixed_.begin(), mixed_.end(), 0.0);
  for (int t = 0; t < cfg_.topics; ++t) {
    for (int ph = 0; ph < 2; ++ph) {
      const double w = step_weight_[static_cast<std::size_t>(t) * 2 + static_cast<std::size_t>(ph)];
      if (w > 0.0) {
        const double* row = &dist_[idx(t, ph, layer)];
        for (int e = 0; e < experts_; ++e) {
          mixed_[static_cast<std::size_t>(e)] += w * row[e];
        }
      }
    }
  }
  if (cfg_.temporal_groups > 0) {
    // Bursting members take burst_multiplier x the uniform share each; the rest is rescaled.
    const double share = cfg_.burst_multiplier / static_cast<double>(experts_);
    const std::span<const int> members = temporal_experts(layer);
    double burst_mass = 0.0;
    for (int g = 0; g < cfg_.temporal_groups; ++g) {
      if (bursting_[static_cast<std::size_t>(layer) * static_cast<std::size_t>(cfg_.temporal_groups) +
                    static_cast<std::size_t>(g)]) {
        for (int m = 0; m < cfg_.temporal_group_size; ++m) {
          mixed_[static_cast<std::size_t>(
              members[static_cast<std::size_t>(g) * static_cast<std::size_t>(cfg_.temporal_group_size) +
                      static_cast<std::size_t>(m)])] = share;
          burst_mass += share;
        }
      }
    }
    if (burst_mass > 0.0) {
      const double scale = 1.0 - burst_mass;  // the non-temporal experts held all the mass
      for (int e = 0; e < experts_; ++e) {
        if (!is_temporal_[static_cast<std::size_t>(layer) * static_cast<std::size_t>(experts_) +
                          static_cast<std::size_t>(e)]) {
          mixed_[static_cast<std::size_t>(e)] *= scale;
        }
      }
      // A bursting member's share is set, not drawn from a capped cell: it may pass the cap.
      water_fill_cap(mixed_, 1.0 / static_cast<double>(top_k_));
    }
  }
  const std::int64_t picks = tokens * top_k_;
  if (cfg_.sampling == RoutingSampling::poisson && is_large_draw(picks, mixed_.size())) {
    poisson_.draw_capped(rng_, picks, tokens, mixed_, ranking(layer), out);
    return;
  }
  multinomial_capped(rng_, picks, tokens, mixed_, ranking(layer), out, alias_, cfg_.sampling == RoutingSampling::fast);
}

bool SyntheticRouter::origin_counts(int layer, int origins, std::int64_t /*tokens*/, std::span<std::int32_t> out) {
  if (!cfg_.origin_aware || step_origins_ == 0 || step_origins_ > origins ||
      last_counts_.size() != static_cast<std::size_t>(experts_)) {
    return false;
  }
  const auto E = static_cast<std::size_t>(experts_);
  const auto O = static_cast<std::size_t>(origins);
  const std::size_t width = static_cast<std::size_t>(cfg_.topics) * 2;
  split_.assign(O, 0.0);
  split_share_.assign(O, 0);
  std::fill(out.begin(), out.end(), 0);
  for (std::size_t e = 0; e < E; ++e) {
    const std::int32_t n = last_counts_[e];
    if (n == 0) {
      continue;
    }
    // Origin o's weight for expert e: its tokens per (topic, phase) x that distribution's probability.
    double total = 0.0;
    std::fill(split_.begin(), split_.end(), 0.0);  // GPUs without requests this step get nothing
    for (std::size_t o = 0; o < static_cast<std::size_t>(step_origins_); ++o) {
      double w = 0.0;
      for (std::size_t tp = 0; tp < width; ++tp) {
        const double tokens = origin_weight_[o * width + tp];
        if (tokens > 0.0) {
          w += tokens * dist_[idx(static_cast<int>(tp / 2), static_cast<int>(tp % 2), layer) + e];
        }
      }
      split_[o] = w;
      total += w;
    }
    if (total <= 0.0) {
      return false;
    }
    for (double& q : split_) {
      q = q / total * n;
    }
    core::apportion(n, split_, split_share_);
    for (std::size_t o = 0; o < O; ++o) {
      out[o * E + e] = split_share_[o];
    }
  }
  return true;
}

}  // namespace epsim::workloads
