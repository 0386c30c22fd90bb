#include "sim/serving/simulator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "hardware/collective_model.hpp"
#include "sim/core/error.hpp"

namespace epsim::serving {

// A pool's groups share its shape, their topology and the forecast buffers of its size.
struct Simulator::Pool {
  PoolShape shape;
  hardware::Topology topo;
  const policies::Placement* placement;  // every group of the pool starts from it
  std::optional<WorkForecast> forecast;  // when triggers asked for forecasts
  hardware::EpCommConfig comm;           // how its dispatch and combine move tokens
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

  Group(int idx, Pool& pl, const SimulationParts& p, std::unique_ptr<policies::RoutingPolicy> r, core::Rng fanout_rng)
      : index(idx),
        gpu_offset(pl.shape.group_first_gpu(idx)),
        pool(&pl),
        routing(std::move(r)),
        placement(*pl.placement),
        trigger(p.make_rebalance ? p.make_rebalance(idx) : nullptr),
        collectives(hardware::make_collective_model(p.collectives, pl.topo, p.network, gpu_offset, pl.comm)),
        scheduler(idx >= p.prefill_groups && !p.kv_blocks_by_rank.empty()
                      ? Scheduler(p.serving.scheduler, p.kv_blocks_by_rank)
                      : Scheduler(pl.topo.num_gpus() / p.serving.attention_tp, p.serving.scheduler,
                                  idx < p.prefill_groups && p.prefill_kv_blocks_per_gpu > 0
                                      ? p.prefill_kv_blocks_per_gpu
                                      : p.kv_blocks_per_gpu)),
        executor(p.model, *p.cost, gpu_offset, pl.topo, placement, *routing, *p.routing_source,
                 p.serving.step_overhead_us, *collectives, p.serving.attention_tp, pl.comm, fanout_rng) {}
};

hardware::Topology group_topology(const hardware::Topology& cluster, int ep_size) {
  const int per_node = cluster.gpus_per_node();
  if (ep_size <= per_node) {
    return hardware::Topology(1, ep_size, cluster.intra(), cluster.inter());
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
  const PoolLayout layout = parts_.pools();
  if (parts_.prefill_placement && layout.prefill.groups == 0) {
    throw core::Error("Simulator: a prefill placement without prefill groups");
  }
  if (!layout.uniform() && !parts_.prefill_placement) {
    throw core::Error("Simulator: a prefill pool of its own EP size needs its own placement (prefill_placement)");
  }
  // pools_[0] is the decode (or co-located) pool, pools_[1] the prefill pool (empty when co-located);
  // groups point into pools_, which never grows after this.
  pools_.reserve(2);
  pools_.push_back(Pool{layout.decode, group_topology(parts_.topology, layout.decode.ep_size), &parts_.placement,
                        std::nullopt, parts_.comm});
  pools_.push_back(Pool{layout.prefill, group_topology(parts_.topology, layout.prefill.ep_size),
                        parts_.prefill_placement ? &*parts_.prefill_placement : &parts_.placement, std::nullopt,
                        parts_.prefill_comm.value_or(parts_.comm)});
  std::vector<int> offsets;
  std::vector<int> sizes;
  for (int g = 0; g < layout.groups(); ++g) {
    Pool& pool = layout.decode.holds(g) ? pools_[0] : pools_[1];
    groups_.push_back(std::make_unique<Group>(g, pool, parts_, parts_.make_routing(), streams_.stream("fanout", g)));
    offsets.push_back(groups_.back()->gpu_offset);
    sizes.push_back(pool.shape.ep_size);
  }
  summary_metrics_ = make_summary_metrics(
      sizes, parts_.serving.window,
      {parts_.placement_curves, parts_.placement_curves_group, static_cast<int>(parts_.model.num_moe_layers())});
  metrics_.set_groups(std::move(offsets), std::move(sizes));
  const bool disaggregated = parts_.prefill_groups > 0;
  if (parts_.make_rebalance || disaggregated) {
    if (!parts_.network) {
      throw core::Error("Simulator: moving expert weights or KV caches needs the network graph, which is missing");
    }
    transfers_ = std::make_unique<hardware::TransferNetwork>(engine_, *parts_.network);
  }
  if (parts_.make_rebalance) {
    migration_.emplace(engine_, transfers_.get(), parts_.migration);
  }
  if (parts_.forecast_work) {
    for (Pool& pool : pools_) {
      pool.forecast.emplace(parts_.model, pool.shape.ep_size, parts_.serving.attention_tp,
                            parts_.serving.scheduler.max_batch_tokens);
    }
  }
  for (const auto& g : groups_) {
    rank_base_.push_back(served_.size());
    served_.resize(served_.size() + static_cast<std::size_t>(g->scheduler.ranks()), 0);
  }
  if (disaggregated) {
    for (int g = 0; g < parts_.prefill_groups; ++g) {
      groups_[static_cast<std::size_t>(g)]->scheduler.set_handoff_after_prefill(true);
    }
    handoff_.emplace(engine_, *transfers_, requests_, parts_.kv_bytes_per_token, parts_.serving.attention_tp);
    router_ = parts_.handoff_router ? std::move(parts_.handoff_router) : [] {
      core::ParamTable none(std::string("disaggregation.handoff"));
      return handoff_registry().create(k_default_handoff, none);
    }();
    // Rank 0 of every decode group, then rank 1 of every group, ...: turns and ties alternate groups.
    int most_ranks = 0;
    for (const auto& g : groups_) {
      most_ranks = std::max(most_ranks, g->scheduler.ranks());
    }
    for (int r = 0; r < most_ranks; ++r) {
      for (auto gi = static_cast<std::size_t>(parts_.prefill_groups); gi < groups_.size(); ++gi) {
        if (r < groups_[gi]->scheduler.ranks()) {
          decode_ranks_.push_back(DecodeRank{static_cast<int>(gi), r, 0, 0, 0, 0});
        }
      }
    }
  }
  observers_.push_back(&metrics_);
  for (const auto& m : summary_metrics_) {
    observers_.push_back(m.get());
  }
  if (parts_.workload.num_requests > 0) {
    requests_.reserve(static_cast<std::size_t>(parts_.workload.num_requests));
  }
}

Simulator::~Simulator() = default;

void Simulator::schedule_next_arrival() {
  if (auto spec = generator_.next()) {
    engine_.schedule_at(spec->arrival_ns, [this, s = *spec] { on_arrival(s); });
  }
}

Simulator::Group& Simulator::pick_group(std::size_t first, std::size_t count) {
  std::size_t& next = next_group_;
  std::size_t gi = first + next % count;
  if (parts_.serving.load_balancer == LoadBalancer::least_outstanding) {
    // The group with the fewest outstanding requests; ties to the lowest index.
    gi = first;
    for (std::size_t i = first; i < first + count; ++i) {
      if (groups_[i]->scheduler.outstanding() < groups_[gi]->scheduler.outstanding()) {
        gi = i;
      }
    }
  }
  next = (next + 1) % count;
  return *groups_[gi];
}

void Simulator::on_arrival(workloads::RequestSpec spec) {
  // Arrivals go to the prefill pool when disaggregated, else to any group.
  const auto pool = parts_.prefill_groups > 0 ? static_cast<std::size_t>(parts_.prefill_groups) : groups_.size();
  Group& g = pick_group(0, pool);
  RequestState r;
  r.spec = spec;
  r.group = g.index;
  r.rank = g.scheduler.least_loaded_rank();
  requests_.push_back(r);
  const bool queued = g.scheduler.enqueue(r.rank, static_cast<int>(requests_.size() - 1), requests_);
  g.arrivals += queued ? 1 : 0;
  served_[rank_base_[static_cast<std::size_t>(g.index)] + static_cast<std::size_t>(r.rank)] += queued ? 1 : 0;
  for (Observer* o : observers_) {
    o->on_arrival(requests_.back());
  }
  const std::optional<workloads::RequestSpec> next = generator_.next();
  if (next && next->arrival_ns == spec.arrival_ns) {
    held_start_ = true;  // a batch arrives at one instant: all of it is queued before a step forms
  } else if (std::exchange(held_start_, false)) {
    for (const auto& grp : groups_) {
      try_start_step(*grp);
    }
  } else if (queued) {
    try_start_step(g);
  }
  if (next) {
    engine_.schedule_at(next->arrival_ns, [this, s = *next] { on_arrival(s); });
  } else {
    for (Observer* o : observers_) {
      o->on_arrivals_end(spec.arrival_ns);
    }
  }
}

void Simulator::try_start_step(Group& g) {
  if (held_start_) {
    return;  // a batch is still arriving at this instant; its last request starts every group
  }
  if (!g.busy && !g.migration.paused && g.arrivals > 0 && g.trigger) {
    place_for_idle_start(g);  // work arrived while the group was idle: its trigger may place for it first
  }
  if (g.busy || g.migration.paused || !g.scheduler.form_batch(requests_, g.batch, engine_.now(), observers_)) {
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

void Simulator::refresh_decode_ranks() {
  for (DecodeRank& d : decode_ranks_) {
    const Scheduler& sch = groups_[static_cast<std::size_t>(d.group)]->scheduler;
    d.outstanding = static_cast<std::int64_t>(sch.outstanding(d.rank));
    const KvCache& kv = sch.kv(d.rank);
    d.free_kv_tokens = kv.free_blocks() * kv.block_tokens();
  }
}

void Simulator::hand_off(Group& from) {
  if (!handoff_ || from.scheduler.handed_off().empty()) {
    return;
  }
  refresh_decode_ranks();  // hand-offs of this step change only `incoming`, which is kept below
  for (const auto& [rank, idx] : from.scheduler.handed_off()) {
    const RequestState& r = requests_[static_cast<std::size_t>(idx)];
    const std::int64_t context = r.spec.prompt_tokens + r.generated;
    const std::size_t pick = router_->pick(decode_ranks_, context);
    DecodeRank& d = decode_ranks_[pick];
    ++d.incoming;
    d.incoming_tokens += context;
    Group& to = *groups_[static_cast<std::size_t>(d.group)];
    const KvHandoff::Side src{from.index, from.gpu_offset, &from.scheduler, rank};
    const KvHandoff::Side dst{to.index, to.gpu_offset, &to.scheduler, d.rank};
    Group* fromp = &from;
    Group* top = &to;
    handoff_->start(idx, src, dst, [this, fromp, top, pick, context] {
      DecodeRank& landed = decode_ranks_[pick];
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
  hand_off(g);
  ++g.steps;
  g.last.end_ns = now;
  g.last.gpu_busy_ns = g.executor.gpu_busy_ns();
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
  if (g.trigger) {
    maybe_rebalance(g);
  }
  if (parts_.serving.max_steps > 0 && ++steps_run_ >= parts_.serving.max_steps) {
    engine_.request_stop();
    return;
  }
  try_start_step(g);
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
  const auto pool_of = [&](const char* name, std::size_t first, std::size_t last) {
    PoolRequests p{name, {}};
    for (std::size_t g = first; g < last; ++g) {
      const auto begin = served_.begin() + static_cast<std::ptrdiff_t>(rank_base_[g]);
      p.per_rank.insert(p.per_rank.end(), begin, begin + groups_[g]->scheduler.ranks());
    }
    res.pools.push_back(std::move(p));
  };
  const auto prefill = static_cast<std::size_t>(parts_.prefill_groups);
  if (prefill > 0) {
    pool_of("prefill", 0, prefill);
    pool_of("decode", prefill, groups_.size());
  } else {
    pool_of("colocated", 0, groups_.size());
  }
  res.end_ns = last_step_end_ns_;
  res.summary = summarize_run(requests_, metrics_, parts_.serving.slo, last_step_end_ns_);
  const MeasuredWindow window = measured_window(requests_, parts_.serving.window);
  for (const auto& m : summary_metrics_) {
    m->report(window, res.figures);
  }
  res.requests = std::move(requests_);
  return res;
}

}  // namespace epsim::serving
