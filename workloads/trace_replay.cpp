// SPDX-License-Identifier: Apache-2.0
#include "workloads/trace_replay.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <span>

#include "core/error.hpp"
#include "workloads/multinomial.hpp"

namespace epsim::workloads {

TraceRoutingSource::TraceRoutingSource(const TraceReplayConfig& cfg, int moe_layers, int experts, int top_k,
                                       const core::RandomStreams& streams)
    : cfg_(cfg), reader_(cfg.file), rng_(streams.stream("routing")), poisson_(cfg.sampling) {
  const trace::Header& h = reader_.header();
  if (static_cast<int>(h.moe_layers()) != moe_layers || static_cast<int>(h.experts()) != experts ||
      static_cast<int>(h.top_k()) != top_k) {
    throw core::Error(fmt::format("{}: the trace has {} MoE layers x {} experts, top-{}; the model has {} x {}, top-{}",
                                  cfg.file, h.moe_layers(), h.experts(), h.top_k(), moe_layers, experts, top_k));
  }
  p_.resize(static_cast<std::size_t>(experts));
  order_.resize(static_cast<std::size_t>(experts));
  if (cfg.topk_group < cfg.expert_groups && h.has_token_experts()) {
    groups_.emplace(experts, cfg.expert_groups, cfg.topk_group);
  }
}

GroupLimitReport TraceRoutingSource::group_limit_report() const {
  GroupLimitReport r = group_report_;
  if (groups_) {
    r.tokens_checked = groups_->tokens();
    r.tokens_over_limit = groups_->tokens_over_limit();
    r.max_groups = groups_->max_groups();
  }
  return r;
}

void TraceRoutingSource::begin_step(const StepContext& /*ctx*/) {
  if (exhausted_) {
    return;
  }
  if (!reader_.next(step_)) {
    if (!cfg_.loop || reader_.steps_read() == 0) {
      exhausted_ = true;
      return;
    }
    reader_.rewind();
    ++loops_;
    if (!reader_.next(step_)) {
      exhausted_ = true;
      return;
    }
  }
  ++replayed_;
  // First pass only: a loop replays tokens already counted.
  if (groups_ && loops_ == 0) {
    const auto top_k = static_cast<int>(reader_.header().top_k());
    for (int l = 0; l < step_.layers_size(); ++l) {
      const auto& ids = step_.layers(l).token_experts();
      const std::int64_t first =
          groups_->add(std::span<const std::uint32_t>(ids.data(), static_cast<std::size_t>(ids.size())), top_k);
      if (first >= 0 && group_report_.first_step < 0) {
        group_report_.first_step = static_cast<std::int64_t>(step_.index());
        group_report_.first_layer = l;
      }
    }
  }
}

void TraceRoutingSource::sample(int layer, std::int64_t tokens, std::span<std::int32_t> out) {
  const trace::LayerLoad& l = step_.layers(layer);
  if (static_cast<std::int64_t>(step_.tokens()) == tokens) {
    std::copy(l.expert_tokens().begin(), l.expert_tokens().end(), out.begin());
    return;
  }
  // Resample the recorded shares to the simulated token count. Small draws pick recorded picks uniformly
  // (exact shares, no table of doubles to build); large draws take the conditional binomials. No recorded
  // share exceeds 1 / top_k, so none needs water-filling here: the reader's validate_step checked every
  // count against the step's tokens and their sum against tokens x top_k.
  const std::int64_t picks = tokens * top_k();
  const std::span<const std::uint32_t> counts(l.expert_tokens().data(),
                                              static_cast<std::size_t>(l.expert_tokens_size()));
  if (!is_large_draw(picks, counts.size())) {
    if (recorded_.build(counts)) {
      tally_recorded(rng_, recorded_, picks, tokens, counts, out, order_);
      return;
    }
  }
  const double sum = std::accumulate(l.expert_tokens().begin(), l.expert_tokens().end(), 0.0);
  for (std::size_t e = 0; e < p_.size(); ++e) {
    p_[e] = sum > 0.0 ? l.expert_tokens(static_cast<int>(e)) / sum : 1.0 / static_cast<double>(p_.size());
  }
  water_fill_cap(p_, 1.0 / static_cast<double>(top_k()));
  if (cfg_.sampling == RoutingSampling::poisson && is_large_draw(picks, p_.size())) {
    poisson_.draw(rng_, picks, p_, out);
    if (const std::int64_t overflow = clip_at_cap(out, tokens); overflow > 0) {
      sort_by_probability(p_, order_);
      place_overflow(overflow, tokens, order_, out);
    }
    return;
  }
  multinomial_capped_unsorted(rng_, picks, tokens, p_, out, alias_, order_, cfg_.sampling == RoutingSampling::fast);
}

bool TraceRoutingSource::origin_counts(int layer, int origins, std::int64_t tokens, std::span<std::int32_t> out) {
  if (exhausted_ || static_cast<int>(reader_.header().origin_gpus()) != origins ||
      static_cast<std::int64_t>(step_.tokens()) != tokens) {
    return false;
  }
  const auto& src = step_.layers(layer).origin_expert_tokens();
  std::copy(src.begin(), src.end(), out.begin());
  return true;
}

}  // namespace epsim::workloads
