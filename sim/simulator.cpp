// SPDX-License-Identifier: Apache-2.0
#include "sim/simulator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "core/error.hpp"
#include "hardware/collective_model.hpp"
#include "sim/cache_aware_pick.hpp"

namespace epsim::serving {

// A pool's groups share its parts, their topology and the forecast buffers of its size; a prefill pool
// also its router and the decode ranks it hands off to.
struct Simulator::Pool {
  PoolParts* parts;
  hardware::Topology topo;
  std::optional<WorkForecast> forecast;   // when triggers asked for forecasts
  std::unique_ptr<HandoffRouter> router;  // prefill pools
  std::vector<DecodeRank> targets;        // prefill pools: rank 0 of each decode group, then rank 1, ...

  const PoolSpec& spec() const { return parts->spec; }
};

struct Simulator::Group {
  int index = 0;
  int gpu_offset = 0;
  Pool* pool;
  std::unique_ptr<policies::RoutingPolicy> routing;
  policies::Placement placement;  // this group's own: rebalancing changes it
  std::unique_ptr<policies::RebalanceTrigger> trigger;
  std::unique_ptr<hardware::CollectiveModel> collectives;
  GroupMigration migration;
  Scheduler scheduler;
  StepExecutor executor;
  Batch batch;
  bool busy = false;
  std::int64_t steps = 0;
  std::int64_t arrivals = 0;              // requests queued here since the trigger last looked
  std::int64_t preemptions_reported = 0;  // the scheduler's preemptions already put in a StepRecord
  StepRecord last;                        // the step in flight (or the last one)
  core::Time wake_ns = -1;                // a wake-up is scheduled then (fetched prefix blocks landing)
  double prefill_ns_per_token = 0.0;      // recent steps' time per token of a rank, for fetch-or-recompute

  Group(int idx, Pool& pl, const SimulationParts& p, core::Rng fanout_rng)
      : index(idx),
        gpu_offset(pl.spec().shape.group_first_gpu(idx)),
        pool(&pl),
        routing(pl.parts->make_routing()),
        placement(pl.parts->placement),
        trigger(pl.parts->make_rebalance ? pl.parts->make_rebalance(idx) : nullptr),
        collectives(hardware::make_collective_model(p.collectives, pl.topo, p.network, gpu_offset, pl.spec().comm)),
        scheduler(!pl.parts->kv_blocks_by_rank.empty() ? Scheduler(p.serving.scheduler, pl.parts->kv_blocks_by_rank)
                                                       : Scheduler(pl.topo.num_gpus() / pl.spec().attention_tp,
                                                                   p.serving.scheduler, pl.parts->kv_blocks_per_gpu)),
        executor(p.model, *p.cost, gpu_offset, pl.topo, placement, *routing, *p.routing_source,
                 p.serving.step_overhead_us, *collectives, pl.spec().attention_tp, pl.spec().comm, fanout_rng,
                 p.serving.speculative) {
    scheduler.set_state_blocks(pl.parts->state_blocks_per_request);
  }
};

PoolParts colocated_pool(int gpus, int ep_size, policies::Placement placement,
                         std::function<std::unique_ptr<policies::RoutingPolicy>()> make_routing, int attention_tp) {
  PoolParts p;
  p.spec.name = "colocated";
  p.spec.shape = PoolShape{0, gpus / ep_size, ep_size, 0};
  p.spec.attention_tp = attention_tp;
  p.placement = std::move(placement);
  p.make_routing = std::move(make_routing);
  return p;
}

hardware::Topology group_topology(const hardware::Topology& cluster, int ep_size) {
  const int per_node = cluster.gpus_per_node();
  if (ep_size <= per_node) {
    // A group inside a mesh node reaches only its own GPUs' links.
    return hardware::Topology(1, ep_size, hardware::among(cluster.intra(), ep_size), cluster.inter());
  }
  return hardware::Topology(ep_size / per_node, per_node, cluster.intra(), cluster.inter());
}

double SimulationResult::figure(std::string_view name) const {
  for (const SummaryFigure& f : figures) {
    if (f.name == name) {
      return f.value;
    }
  }
  throw core::Error("no summary metric reported \"" + std::string(name) + "\"");
}

Simulator::Simulator(SimulationParts parts)
    : parts_(std::move(parts)),
      streams_(parts_.seed),
      generator_(parts_.workload, streams_),
      metrics_(parts_.topology.num_gpus(), parts_.serving.window) {
  make_groups();
  const bool rebalancing = std::any_of(pools_.begin(), pools_.end(),
                                       [](const Pool& p) { return static_cast<bool>(p.parts->make_rebalance); });
  const bool disaggregated =
      std::any_of(pools_.begin(), pools_.end(), [](const Pool& p) { return !p.spec().handoff_to.empty(); });
  if (rebalancing || disaggregated) {
    if (!parts_.network) {
      throw core::Error("Simulator: moving expert weights or KV caches needs the network graph, which is missing");
    }
    transfers_ = std::make_unique<hardware::TransferNetwork>(engine_, *parts_.network);
  }
  if (rebalancing) {
    migration_.emplace(engine_, transfers_.get(), parts_.migration);
  }
  if (parts_.forecast_work) {
    for (Pool& pool : pools_) {
      pool.forecast.emplace(parts_.model, pool.spec().shape.ep_size, pool.spec().attention_tp,
                            parts_.serving.scheduler.max_batch_tokens);
    }
  }
  for (Pool& pool : pools_) {
    if (!pool.spec().handoff_to.empty()) {
      connect_handoffs(pool);
    }
  }
  if (disaggregated) {
    handoff_.emplace(engine_, *transfers_, requests_, parts_.kv_bytes_per_token, parts_.state_bytes_per_request);
  }
  observers_.push_back(&metrics_);
  for (const auto& m : summary_metrics_) {
    observers_.push_back(m.get());
  }
  if (parts_.workload.num_requests > 0) {
    requests_.reserve(static_cast<std::size_t>(parts_.workload.num_requests));
  }
}

void Simulator::make_groups() {
  if (parts_.pools.empty()) {
    throw core::Error("Simulator: a deployment needs at least one pool");
  }
  // Groups point into pools_, which never grows after this.
  pools_.reserve(parts_.pools.size());
  for (PoolParts& pp : parts_.pools) {
    if (!pp.make_routing) {
      throw core::Error(fmt::format("Simulator: pool \"{}\" has no routing policy", pp.spec.name));
    }
    pools_.push_back(Pool{&pp, group_topology(parts_.topology, pp.spec.shape.ep_size), std::nullopt, nullptr, {}});
  }
  std::vector<int> offsets;
  std::vector<int> sizes;
  for (Pool& pool : pools_) {
    const PoolShape& shape = pool.spec().shape;
    if (shape.first_group != static_cast<int>(groups_.size())) {
      throw core::Error(fmt::format("Simulator: pool \"{}\" starts at group {}, expected {}", pool.spec().name,
                                    shape.first_group, groups_.size()));
    }
    for (int g = shape.first_group; g < shape.first_group + shape.groups; ++g) {
      groups_.push_back(std::make_unique<Group>(g, pool, parts_, streams_.stream("fanout", g)));
      if (parts_.serving.prefix_cache.enabled && pool.spec().takes_arrivals()) {
        // A decode pool receives whole KV caches from prefill and keeps none for later prompts.
        groups_.back()->scheduler.enable_prefix_cache(
            parts_.serving.prefix_cache,
            static_cast<double>(parts_.serving.scheduler.kv_block_tokens) * parts_.kv_bytes_per_token,
            pool.spec().attention_tp);
      }
      if (parts_.serving.speculative.enabled()) {
        // Each group draws its acceptances from its own stream: same seed, same tokens.
        groups_.back()->scheduler.set_speculation(parts_.serving.speculative.acceptance,
                                                  streams_.stream("speculative", static_cast<std::uint64_t>(g)));
      }
      offsets.push_back(groups_.back()->gpu_offset);
      sizes.push_back(shape.ep_size);
      if (pool.spec().takes_arrivals()) {
        entry_groups_.push_back(static_cast<std::size_t>(g));
        entry_schedulers_.push_back(&groups_.back()->scheduler);
      }
      rank_base_.push_back(served_.size());
      served_.resize(served_.size() + static_cast<std::size_t>(groups_.back()->scheduler.ranks()), 0);
    }
  }
  if (entry_groups_.empty()) {
    throw core::Error("Simulator: no pool takes arrivals (every pool decodes only)");
  }
  summary_metrics_ = make_summary_metrics(
      sizes, parts_.serving.window,
      {parts_.placement_curves, parts_.placement_curves_group, static_cast<int>(parts_.model.num_moe_layers())},
      parts_.serving.speculative.enabled(), parts_.cost->power_limited());
  metrics_.set_groups(std::move(offsets), std::move(sizes));
}

void Simulator::connect_handoffs(Pool& pool) {
  const PoolShape& shape = pool.spec().shape;
  for (int g = shape.first_group; g < shape.first_group + shape.groups; ++g) {
    groups_[static_cast<std::size_t>(g)]->scheduler.set_handoff_after_prefill(true);
  }
  pool.router = pool.parts->handoff_router ? std::move(pool.parts->handoff_router) : [] {
    core::ParamTable none(std::string("handoff"));
    return handoff_registry().create(k_default_handoff, none);
  }();
  // Rank 0 of every decode group, then rank 1 of every group, ...: turns and ties alternate groups.
  std::vector<std::size_t> targets;
  int most_ranks = 0;
  for (const int to : pool.spec().handoff_to) {
    const PoolShape& dst = pools_.at(static_cast<std::size_t>(to)).spec().shape;
    for (int g = dst.first_group; g < dst.first_group + dst.groups; ++g) {
      targets.push_back(static_cast<std::size_t>(g));
      most_ranks = std::max(most_ranks, groups_[static_cast<std::size_t>(g)]->scheduler.ranks());
    }
  }
  for (int r = 0; r < most_ranks; ++r) {
    for (const std::size_t gi : targets) {
      if (r < groups_[gi]->scheduler.ranks()) {
        pool.targets.push_back(DecodeRank{static_cast<int>(gi), r, 0, 0, 0, 0});
      }
    }
  }
}

Simulator::~Simulator() = default;

void Simulator::schedule_next_arrival() {
  if (auto spec = generator_.next()) {
    engine_.schedule_at(spec->arrival_ns, [this, s = *spec] { on_arrival(s); });
  }
}

Simulator::Group& Simulator::pick_entry_group() {
  const std::size_t count = entry_groups_.size();
  std::size_t pick = next_group_ % count;
  if (parts_.serving.load_balancer == LoadBalancer::least_outstanding) {
    // The group with the fewest outstanding requests; ties to the lowest index.
    pick = 0;
    for (std::size_t i = 1; i < count; ++i) {
      if (groups_[entry_groups_[i]]->scheduler.outstanding() < groups_[entry_groups_[pick]]->scheduler.outstanding()) {
        pick = i;
      }
    }
  }
  next_group_ = (next_group_ + 1) % count;
  return *groups_[entry_groups_[pick]];
}

bool Simulator::admit_arrival(const workloads::RequestSpec& spec, Group*& group) {
  // Arrivals go to the pools that prefill (prefill or colocated).
  Group* picked = nullptr;
  int rank = 0;
  if (parts_.serving.load_balancer == LoadBalancer::cache_aware) {
    const auto [index, r] =
        pick_cache_aware(parts_.serving.cache_aware, entry_schedulers_, spec, parts_.serving.scheduler.kv_block_tokens);
    picked = groups_[entry_groups_[index]].get();
    rank = r;
  } else {
    picked = &pick_entry_group();
    rank = picked->scheduler.least_loaded_rank();
  }
  Group& g = *picked;
  group = &g;
  RequestState r;
  r.spec = spec;
  r.group = g.index;
  r.rank = rank;
  requests_.push_back(std::move(r));
  const bool queued = g.scheduler.enqueue(requests_.back().rank, static_cast<int>(requests_.size() - 1), requests_);
  g.arrivals += queued ? 1 : 0;
  last_arrival_ns_ = std::max(last_arrival_ns_, spec.arrival_ns);
  if (!queued) {
    generator_.end_session(spec);  // a rejected turn ends its session
  }
  served_[rank_base_[static_cast<std::size_t>(g.index)] + static_cast<std::size_t>(requests_.back().rank)] +=
      queued ? 1 : 0;
  for (Observer* o : observers_) {
    o->on_arrival(requests_.back());
  }
  return queued;
}

void Simulator::on_arrival(const workloads::RequestSpec& spec) {
  Group* g = nullptr;
  const bool queued = admit_arrival(spec, g);
  const std::optional<workloads::RequestSpec> next = generator_.next();
  if (next && next->arrival_ns == spec.arrival_ns) {
    held_start_ = true;  // a batch arrives at one instant: all of it is queued before a step forms
  } else if (std::exchange(held_start_, false)) {
    for (const auto& grp : groups_) {
      try_start_step(*grp);
    }
  } else if (queued) {
    try_start_step(*g);
  }
  if (next) {
    engine_.schedule_at(next->arrival_ns, [this, s = *next] { on_arrival(s); });
  } else {
    open_loop_ended_ = true;
    end_arrivals_if_done();
  }
}

void Simulator::end_arrivals_if_done() {
  // Sessions' turns keep arriving after the arrival process ends, until every session has ended.
  if (open_loop_ended_ && !arrivals_ended_ && !generator_.sessions_open()) {
    arrivals_ended_ = true;
    for (Observer* o : observers_) {
      o->on_arrivals_end(last_arrival_ns_);
    }
  }
}

void Simulator::on_follow_up(const workloads::RequestSpec& spec) {
  Group* g = nullptr;
  if (admit_arrival(spec, g)) {
    try_start_step(*g);
  }
  end_arrivals_if_done();
}

void Simulator::schedule_follow_ups(const Group& g, core::Time now) {
  for (const BatchEntry& e : g.batch.entries) {
    const RequestState& r = requests_[static_cast<std::size_t>(e.request)];
    if (r.spec.session >= 0 && r.finish_ns == now) {
      if (std::optional<workloads::RequestSpec> next = generator_.follow_up(r.spec, now)) {
        engine_.schedule_at(std::max(next->arrival_ns, now), [this, s = std::move(*next)] { on_follow_up(s); });
      }
    }
  }
  end_arrivals_if_done();
}

void Simulator::try_start_step(Group& g) {
  if (held_start_) {
    return;  // a batch is still arriving at this instant; its last request starts every group
  }
  if (!g.busy && !g.migration.paused && g.arrivals > 0 && g.trigger) {
    place_for_idle_start(g);  // work arrived while the group was idle: its trigger may place for it first
  }
  if (g.busy || g.migration.paused) {
    return;
  }
  if (!g.scheduler.form_batch(requests_, g.batch, engine_.now(), observers_)) {
    // Requests whose cached blocks are still being fetched start their prefill when they land.
    const core::Time ready = g.scheduler.next_ready_ns(requests_, engine_.now());
    if (ready > 0 && ready != g.wake_ns) {
      g.wake_ns = ready;
      Group* gp = &g;
      engine_.schedule_at(ready, [this, gp] { try_start_step(*gp); });
    }
    return;
  }
  g.busy = true;
  if (!g.executor.run(g.batch, requests_, engine_.now(), g.index, g.steps, observers_, g.last)) {
    routing_exhausted_ = true;  // a finished, non-looping trace: this group serves no further step
    return;
  }
  const Scheduler& sch = g.scheduler;
  g.last.queued_requests = sch.queued_requests();
  g.last.running_requests = sch.running_requests();
  g.last.kv_used_tokens = sch.kv_used_tokens();
  g.last.kv_capacity_tokens = sch.kv_capacity_tokens();
  g.last.caps = sch.last_caps();
  // Preemptions of a batch that came out empty go to the next step: the steps' sum is the total.
  g.last.preemptions = sch.preemptions() - std::exchange(g.preemptions_reported, sch.preemptions());
  // A step longer than simulated time can hold comes from numbers out of any physical range (a cost
  // model fed extreme specs): refuse it rather than let the clock wrap around.
  if (!(g.last.duration_ns >= 0.0 && g.last.duration_ns <= core::k_max_time_s * 1e9)) {
    throw core::Error(
        fmt::format("group {} step {} would take {:g} s: the cost model's inputs (GPU, link or model "
                    "specs) are out of any physical range",
                    g.index, g.steps, g.last.duration_ns * 1e-9));
  }
  engine_.schedule_after(core::round_ns(g.last.duration_ns), [this, &g] { on_step_end(g); });
}

void Simulator::refresh_decode_ranks(Pool& from) {
  for (DecodeRank& d : from.targets) {
    const Scheduler& sch = groups_[static_cast<std::size_t>(d.group)]->scheduler;
    d.outstanding = static_cast<std::int64_t>(sch.outstanding(d.rank));
    const KvCache& kv = sch.kv(d.rank);
    d.free_kv_tokens = kv.free_blocks() * kv.block_tokens();
  }
}

void Simulator::hand_off(Group& from) {
  Pool& src = *from.pool;
  if (!handoff_ || src.targets.empty() || from.scheduler.handed_off().empty()) {
    return;
  }
  refresh_decode_ranks(src);  // hand-offs of this step change only `incoming`, which is kept below
  for (const auto& [rank, idx] : from.scheduler.handed_off()) {
    const RequestState& r = requests_[static_cast<std::size_t>(idx)];
    const std::int64_t context = r.spec.prompt_tokens + r.generated;
    const std::size_t pick = src.router->pick(src.targets, context);
    DecodeRank& d = src.targets[pick];
    ++d.incoming;
    d.incoming_tokens += context;
    Group& to = *groups_[static_cast<std::size_t>(d.group)];
    const KvHandoff::Side from_side{from.index, from.gpu_offset, &from.scheduler, rank, src.spec().attention_tp};
    const KvHandoff::Side to_side{to.index, to.gpu_offset, &to.scheduler, d.rank, to.pool->spec().attention_tp};
    Group* fromp = &from;
    Group* top = &to;
    Pool* srcp = &src;
    handoff_->start(idx, from_side, to_side, [this, srcp, fromp, top, pick, context] {
      DecodeRank& landed = srcp->targets[pick];
      --landed.incoming;
      landed.incoming_tokens -= context;
      ++served_[rank_base_[static_cast<std::size_t>(landed.group)] + static_cast<std::size_t>(landed.rank)];
      try_start_step(*top);
      try_start_step(*fromp);  // freed blocks may let waiting prompts in
    });
  }
  from.scheduler.handed_off().clear();
}

void Simulator::predict_for(Group& g, const std::optional<policies::PredictionRequest>& wanted,
                            policies::RebalanceView& view) {
  if (g.pool->forecast && wanted &&
      g.pool->forecast->predict(g.scheduler, requests_, *parts_.routing_source, *wanted)) {
    view.predicted_load = g.pool->forecast->load();
    view.predicted_passes = g.pool->forecast->passes();
  }
}

void Simulator::place_for_idle_start(Group& g) {
  const std::optional<policies::PredictionRequest> wanted = g.trigger->wants_idle_start();
  if (!wanted || g.migration.active() || !migration_) {
    return;  // the arrivals stay counted for the next step boundary
  }
  policies::RebalanceView view{g.steps, {}, &g.placement, false};
  view.arrivals = std::exchange(g.arrivals, 0);
  predict_for(g, wanted, view);
  start_migration(g, g.trigger->on_idle_start(view));
}

void Simulator::maybe_rebalance(Group& g) {
  policies::RebalanceView view{g.steps - 1, g.executor.step_loads(), &g.placement, g.migration.active()};
  view.arrivals = std::exchange(g.arrivals, 0);
  view.prefill_tokens = g.batch.prefill_tokens;
  view.decode_tokens = g.batch.decode_tokens;
  predict_for(g, g.pool->forecast ? g.trigger->wants_prediction(view) : std::nullopt, view);
  start_migration(g, g.trigger->on_step(view));
}

void Simulator::start_migration(Group& g, std::optional<policies::Placement> next) {
  if (!next || g.migration.active() || !migration_) {
    return;  // nothing new, or the previous migration is still under way
  }
  for (Observer* o : observers_) {
    o->on_rebalance(g.index, engine_.now(), g.trigger->kind());
  }
  Group* gp = &g;
  migration_->start(g.migration, g.placement, std::move(*next), g.index, g.gpu_offset, g.pool->topo, observers_,
                    [this, gp] { try_start_step(*gp); });
}

void Simulator::on_step_end(Group& g) {
  const core::Time now = engine_.now();
  g.scheduler.complete(g.batch, requests_, now, observers_);
  g.last.output_tokens = g.scheduler.last_emitted();
  schedule_follow_ups(g, now);
  hand_off(g);
  ++g.steps;
  g.last.end_ns = now;
  g.last.gpu_busy_ns = g.executor.gpu_busy_ns();
  g.executor.end_step(g.last.start_ns, now);
  if (g.scheduler.prefix_caching() && g.batch.prefill_tokens > 0) {
    // A rank's time per token in steps that prefill (an exponential average): what recomputing costs.
    const double per_rank =
        static_cast<double>(g.batch.prefill_tokens + g.batch.decode_tokens) / static_cast<double>(g.scheduler.ranks());
    const double sample = static_cast<double>(now - g.last.start_ns) / per_rank;
    g.prefill_ns_per_token = g.prefill_ns_per_token > 0.0 ? 0.8 * g.prefill_ns_per_token + 0.2 * sample : sample;
    g.scheduler.set_recompute_ns_per_token(g.prefill_ns_per_token);
  }
  for (Observer* o : observers_) {
    o->on_step(g.last);
  }
  last_step_end_ns_ = std::max(last_step_end_ns_, now);
  g.busy = false;
  if (progress_ && ++steps_since_progress_ >= progress_every_) {
    steps_since_progress_ = 0;
    RunProgress p{now, static_cast<std::int64_t>(requests_.size()), 0};
    for (const RequestState& r : requests_) {
      p.requests_finished += r.finished() ? 1 : 0;
    }
    progress_(p);
  }
  if (migration_ && !g.migration.compute_moves.empty()) {
    migration_->advance(g.migration, g.placement, g.index, g.last.start_ns, g.executor.compute_windows(), observers_);
  }
  if (migration_ && g.migration.chunk_waiting) {
    // A chunked migration moves its next chunk at this step boundary, stopping the group meanwhile.
    migration_->next_chunk(g.migration, g.placement, g.index, g.gpu_offset, observers_);
  }
  if (g.trigger) {
    maybe_rebalance(g);
  }
  if (parts_.serving.max_steps > 0 && ++steps_run_ >= parts_.serving.max_steps) {
    engine_.request_stop();
    return;
  }
  try_start_step(g);
}

PrefixCacheResult Simulator::prefix_cache_result(const MeasuredWindow& window) const {
  PrefixCacheResult out;
  out.enabled = parts_.serving.prefix_cache.enabled;
  if (!out.enabled) {
    return out;
  }
  for (const RequestState& r : requests_) {
    if (r.cached_tokens >= 0 && window.contains(r.spec.arrival_ns)) {
      ++out.requests;
      out.requests_hit += r.cached_tokens > 0 ? 1 : 0;
      out.prompt_tokens += r.spec.prompt_tokens;
      out.cached_tokens += r.cached_tokens;
    }
  }
  for (const auto& g : groups_) {
    if (g->scheduler.prefix_caching()) {
      for (int r = 0; r < g->scheduler.ranks(); ++r) {
        out.tally.add(g->scheduler.prefix_cache(r).tally());
      }
    }
  }
  return out;
}

SimulationResult Simulator::run() {
  schedule_next_arrival();
  const core::Time limit = core::from_seconds(parts_.serving.max_sim_time_s);
  engine_.run_until(limit);
  SimulationResult res;
  res.hit_time_limit = engine_.pending() > 0 && !engine_.stop_requested();
  res.routing_exhausted = routing_exhausted_;
  res.routing_loops = parts_.routing_source->loops();
  res.routing_group_limit = parts_.routing_source->group_limit_report();
  for (const auto& g : groups_) {
    if (!g->trigger) {
      continue;
    }
    for (const policies::TriggerStat& stat : g->trigger->stats()) {
      auto it = std::find_if(res.trigger_stats.begin(), res.trigger_stats.end(),
                             [&](const policies::TriggerStat& s) { return s.name == stat.name; });
      if (it == res.trigger_stats.end()) {
        res.trigger_stats.push_back(stat);
      } else {
        it->pool(stat);
      }
    }
  }
  if (migration_) {
    res.rebalances = migration_->rebalances();
    res.expert_moves = migration_->expert_moves();
    res.migration_bytes = migration_->bytes();
    res.migration_stall_ms = migration_->stall_ns() / 1e6;
  }
  if (handoff_) {
    res.kv_transfers = handoff_->transfers();
    res.kv_transfer_bytes = handoff_->bytes();
    res.kv_transfer_ms_mean = handoff_->mean_ms();
  }
  for (const Pool& pool : pools_) {
    PoolRequests p{pool.spec().name, {}};
    const PoolShape& shape = pool.spec().shape;
    for (int g = shape.first_group; g < shape.first_group + shape.groups; ++g) {
      const auto begin = served_.begin() + static_cast<std::ptrdiff_t>(rank_base_[static_cast<std::size_t>(g)]);
      p.per_rank.insert(p.per_rank.end(), begin, begin + groups_[static_cast<std::size_t>(g)]->scheduler.ranks());
    }
    res.pools.push_back(std::move(p));
  }
  res.end_ns = last_step_end_ns_;
  res.summary = summarize_run(requests_, metrics_, parts_.serving.slo, last_step_end_ns_);
  const MeasuredWindow window = measured_window(requests_, parts_.serving.window);
  res.prefix_cache = prefix_cache_result(window);
  for (const auto& m : summary_metrics_) {
    m->report(window, res.figures);
  }
  res.requests = std::move(requests_);
  return res;
}

}  // namespace epsim::serving
