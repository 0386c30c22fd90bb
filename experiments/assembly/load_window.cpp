// SPDX-License-Identifier: Apache-2.0
#include "experiments/assembly/load_window.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include <toml++/toml.h>

#include "core/error.hpp"
#include "core/grid_view.hpp"
#include "engines/coactivation.hpp"
#include "experiments/assembly/build_simulation.hpp"
#include "policies/grace/affinity.hpp"
#include "policies/rebalance_trigger.hpp"
#include "workloads/synthetic_router.hpp"
#include "workloads/trace_io.hpp"

namespace epsim::experiments {
namespace {

// Records the expert loads of the steps after the first `skip`, up to `keep` steps, never re-places.
class LoadRecorder final : public policies::RebalanceTrigger {
 public:
  LoadRecorder(std::shared_ptr<std::vector<double>> out, std::shared_ptr<std::vector<std::uint8_t>> prefills,
               std::int64_t skip, std::int64_t keep)
      : out_(std::move(out)), prefills_(std::move(prefills)), skip_(skip), keep_(keep) {}
  std::optional<policies::Placement> on_step(const policies::RebalanceView& view) override {
    if (seen_++ >= skip_ && seen_ <= skip_ + keep_) {
      out_->insert(out_->end(), view.expert_tokens.begin(), view.expert_tokens.end());
      prefills_->push_back(view.prefill_tokens > view.decode_tokens ? 1 : 0);  // the reactive trigger's rule
    }
    return std::nullopt;
  }

 private:
  std::shared_ptr<std::vector<double>> out_;
  std::shared_ptr<std::vector<std::uint8_t>> prefills_;
  std::int64_t skip_;
  std::int64_t keep_;
  std::int64_t seen_ = 0;
};

// GEM's step 1: serve with the linear placement and record the routing of real steps (their real
// token counts, prefill and decode mixed as the scheduler forms them), skipping the ramp-up.
LoadWindow warmup_load(const ExperimentConfig& cfg, int target) {
  ExperimentConfig warm = cfg;
  // Linear, unless it cannot give every GPU an expert (more GPUs than experts): then uniform replication.
  warm.policy.placement = cfg.model.routed_experts >= serving::max_ep_size(cfg.pools) ? "linear" : "replicated";
  warm.policy.placement_options = std::make_shared<const toml::table>();
  warm.policy.rebalance = policies::RebalanceConfig{};
  warm.policy.needs = policies::declared_needs(warm.policy, cfg.source);  // linear's: no window of its own
  // A generated arrival process goes on for as long as the window needs: the run's own request count and
  // simulated time (a max-rate probe's: ~1,000 prefill-only requests, seconds) may hold fewer steps than
  // the window, and the last of them drain the queue instead of serving the offered load. The warm-up
  // stops at its step budget below. A replayed file or a conversation file ends where it ends.
  const bool from_file = warm.workload.arrivals.kind == workloads::ArrivalConfig::Kind::replay ||
                         warm.workload.sessions.kind == workloads::SessionConfig::Kind::sharegpt;
  if (!from_file) {
    warm.workload.num_requests = 0;
    warm.workload.duration_s = 0.0;
    warm.serving.max_sim_time_s = core::k_max_time_s;
  }
  for (serving::PoolSpec& pool : warm.pools) {
    pool.policy = warm.policy;
  }
  const policies::LoadWindowConfig& window = serving::pool_of_group(cfg.pools, target).policy.load_window;
  const std::int64_t skip = window.skip_steps;
  const std::int64_t keep = window.steps;
  serving::SimulationParts parts = build_simulation(warm, PoolWindows{});  // linear: no window of its own
  if (!parts.network) {  // triggers need the graph (the recorder never moves anything, but says so)
    parts.network = std::make_shared<const hardware::NetworkGraph>(cfg.cluster);
  }
  auto steps = std::make_shared<std::vector<double>>();
  auto prefills = std::make_shared<std::vector<std::uint8_t>>();
  // One recorder, on the group the placement is made for (a pool's first group): its steps are a
  // consecutive sequence.
  for (serving::PoolParts& pool : parts.pools) {
    pool.make_rebalance = [steps, prefills, skip, keep,
                           target](int group) -> std::unique_ptr<policies::RebalanceTrigger> {
      return group == target ? std::make_unique<LoadRecorder>(steps, prefills, skip, keep) : nullptr;
    };
  }
  const int groups = std::max(1, serving::total_groups(cfg.pools));
  parts.serving.max_steps = (skip + keep) * groups;
  serving::Simulator(std::move(parts)).run();
  const auto per_step =
      static_cast<std::size_t>(cfg.model.num_moe_layers()) * static_cast<std::size_t>(cfg.model.routed_experts);
  if (steps->size() < static_cast<std::size_t>(keep) * per_step) {
    // Pools of different EP sizes hand requests to each other: the recorded group's steps are too few
    // however long the warm-up serves, so only the synthetic window helps there. Otherwise the replayed
    // file's requests (or conversations) ended.
    const bool mixed_ep = std::any_of(cfg.pools.begin(), cfg.pools.end(), [&](const serving::PoolSpec& p) {
      return p.shape.ep_size != cfg.pools.front().shape.ep_size;
    });
    std::string why;
    std::string other_fix = ", or lower policy.load_window_skip_steps / load_window_steps";
    if (mixed_ep) {
      why = " (its pools differ in EP size, so the warm-up records one pool's share of the steps)";
      other_fix.clear();
    } else if (from_file) {
      why = " (the replayed file's requests ended)";
      other_fix += ", or replay a longer file";
    }
    throw core::ConfigError(
        cfg.source, "policy.load_window",
        fmt::format("the warm-up run served only {} steps after its {} ramp-up steps, fewer than the {} of the load "
                    "window{}: set policy.load_window = \"synthetic\" (a window drawn from the routing model, no "
                    "warm-up run){}",
                    steps->size() / per_step, skip, keep, why, other_fix));
  }
  LoadWindow w;
  w.total.assign(per_step, 0.0);
  w.steps = std::move(*steps);
  w.prefill_steps = std::move(*prefills);
  for (std::size_t i = 0; i < w.steps.size(); ++i) {
    w.total[i % per_step] += w.steps[i];
  }
  return w;
}

// A placement that counts pairs of a token's experts needs the trace's per-token ids.
void require_token_ids(const ExperimentConfig& cfg, const workloads::TraceReader& reader, std::string_view input) {
  if (!reader.header().has_token_experts()) {
    throw core::ConfigError(cfg.source, "routing.trace_file",
                            fmt::format("the placement needs {}, but the trace has no per-token top-k expert ids "
                                        "(has_token_experts)",
                                        input));
  }
}

}  // namespace

std::vector<double> profile_coactivation(const ExperimentConfig& cfg, std::size_t pool) {
  const policies::LoadWindowConfig& window = cfg.pools.at(pool).policy.load_window;
  const auto layers = static_cast<int>(cfg.model.num_moe_layers());
  const auto experts = static_cast<int>(cfg.model.routed_experts);
  const auto k = static_cast<int>(cfg.model.top_k);
  const auto block = static_cast<std::size_t>(experts) * static_cast<std::size_t>(experts);
  std::vector<double> counts(static_cast<std::size_t>(layers) * block, 0.0);
  const auto by_layer = core::grid(counts, layers, block);  // [layer][expert x expert]
  if (cfg.routing.source == workloads::RoutingSourceKind::trace) {
    workloads::TraceReader reader(cfg.routing.trace.file);
    require_token_ids(cfg, reader, "expert co-selection (GRACE's affinity)");
    trace::Step s;
    std::vector<int> topk(static_cast<std::size_t>(k));
    for (std::int64_t i = 0; i < window.steps && reader.next(s); ++i) {
      for (int l = 0; l < layers; ++l) {
        const auto& ids = s.layers(l).token_experts();
        const std::span<double> layer_counts = by_layer.row(l);
        for (int t = 0; t + k <= ids.size(); t += k) {
          for (int j = 0; j < k; ++j) {
            topk[static_cast<std::size_t>(j)] = static_cast<int>(ids.Get(t + j));
          }
          policies::add_coselection(layer_counts, experts, topk);
        }
      }
    }
    return counts;
  }
  // Synthetic routing: the expected co-selections of the window's tokens under the topic structure.
  const workloads::SyntheticRouter router(cfg.routing.synthetic, layers, experts, k,
                                          core::RandomStreams(cfg.seed_of(SeedFamily::workload)));
  const double tokens = static_cast<double>(window.steps) * static_cast<double>(window.tokens);
  for (int l = 0; l < layers; ++l) {
    const std::span<double> layer_counts = by_layer.row(l);
    router.expected_coselection(l, 0, layer_counts);
    for (double& c : layer_counts) {
      c *= tokens;
    }
  }
  return counts;
}

std::vector<double> profile_transitions(const ExperimentConfig& cfg, std::size_t pool) {
  const policies::LoadWindowConfig& window = cfg.pools.at(pool).policy.load_window;
  const auto layers = static_cast<int>(cfg.model.num_moe_layers());
  const auto experts = static_cast<int>(cfg.model.routed_experts);
  const auto block = static_cast<std::size_t>(experts) * static_cast<std::size_t>(experts);
  if (cfg.routing.source == workloads::RoutingSourceKind::trace) {
    workloads::TraceReader reader(cfg.routing.trace.file);
    require_token_ids(cfg, reader, "cross-layer transitions (MoETuner's)");
    engines::TransitionTally tally(reader.header());
    trace::Step s;
    for (std::int64_t i = 0; i < window.steps && reader.next(s); ++i) {
      tally.add(s);
    }
    return tally.counts();
  }
  std::vector<double> counts(static_cast<std::size_t>(std::max(layers - 1, 0)) * block, 0.0);
  const workloads::SyntheticRouter router(cfg.routing.synthetic, layers, experts, static_cast<int>(cfg.model.top_k),
                                          core::RandomStreams(cfg.seed_of(SeedFamily::workload)));
  const double tokens = static_cast<double>(window.steps) * static_cast<double>(window.tokens);
  for (int l = 0; l + 1 < layers; ++l) {
    const std::span<double> pair(counts.data() + static_cast<std::size_t>(l) * block, block);
    router.expected_transitions(l, 0, pair);
    for (double& c : pair) {
      c *= tokens;
    }
  }
  return counts;
}

LoadWindow profile_load(const ExperimentConfig& cfg, int group) {
  const policies::LoadWindowConfig& window = serving::pool_of_group(cfg.pools, group).policy.load_window;
  const auto layers = static_cast<int>(cfg.model.num_moe_layers());
  const auto experts = static_cast<int>(cfg.model.routed_experts);
  const auto per_step = static_cast<std::size_t>(layers) * static_cast<std::size_t>(experts);
  LoadWindow w;
  w.total.assign(per_step, 0.0);
  const auto total = core::grid(w.total, layers, experts);  // [layer][expert]
  if (cfg.routing.source == workloads::RoutingSourceKind::trace) {
    workloads::TraceReader reader(cfg.routing.trace.file);
    trace::Step s;
    for (std::int64_t i = 0; i < window.steps && reader.next(s); ++i) {
      for (int l = 0; l < layers; ++l) {
        for (int e = 0; e < experts; ++e) {
          const double n = s.layers(l).expert_tokens(e);
          total(l, e) += n;
          w.steps.push_back(n);
        }
      }
    }
    return w;
  }
  if (window.source == policies::LoadWindowSource::warmup) {
    return warmup_load(cfg, group);
  }
  // A router of its own: the same hot sets and topics as the run's, without touching the run's draws.
  workloads::SyntheticRouter router(cfg.routing.synthetic, layers, experts, static_cast<int>(cfg.model.top_k),
                                    core::RandomStreams(cfg.seed_of(SeedFamily::workload)));
  std::vector<std::int32_t> counts(static_cast<std::size_t>(experts));
  const std::int64_t tokens = window.tokens;
  for (std::int64_t i = 0; i < window.steps; ++i) {
    router.begin_step(workloads::StepContext{0, tokens, 0, tokens, {}});
    for (int l = 0; l < layers; ++l) {
      router.sample(l, tokens, counts);
      for (int e = 0; e < experts; ++e) {
        total(l, e) += counts[static_cast<std::size_t>(e)];
        w.steps.push_back(counts[static_cast<std::size_t>(e)]);
      }
    }
  }
  return w;
}

PoolWindows profile_pool_windows(const ExperimentConfig& cfg) {
  PoolWindows out;
  out.of_pool.resize(cfg.pools.size());
  for (std::size_t i = 0; i < cfg.pools.size(); ++i) {
    if (cfg.pools[i].policy.needs.load_window) {
      out.of_pool[i] = profile_load(cfg, cfg.pools[i].shape.first_group);
    }
  }
  return out;
}

}  // namespace epsim::experiments
