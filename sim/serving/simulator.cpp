#include "sim/serving/simulator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

#include "policies/migration.hpp"
#include "sim/core/error.hpp"

namespace epsim::serving {

struct Simulator::Group {
  int index = 0;
  int gpu_offset = 0;
  std::unique_ptr<policies::RoutingPolicy> routing;
  policies::Placement placement;  // this group's own: rebalancing changes it
  std::unique_ptr<policies::RebalanceTrigger> trigger;
  std::unique_ptr<hardware::CollectiveCoster> coster;
  std::optional<policies::Placement> incoming;  // a placement whose experts are still moving
  int moves_pending = 0;
  struct Move {
    double left_bytes = 0.0;
    double bytes_per_ns = 0.0;
  };
  std::vector<Move> compute_moves;  // compute-phase migrations under way
  bool paused = false;              // stop-the-world migration in progress
  core::Time paused_at = 0;
  Scheduler scheduler;
  StepExecutor executor;
  Batch batch;
  bool busy = false;
  std::int64_t steps = 0;
  std::int64_t arrivals = 0;  // requests queued here since the trigger last looked
  core::Time step_start_ns = 0;
  StepResult last;

  Group(int idx, int offset, const SimulationParts& p, hardware::Topology topo,
        std::unique_ptr<policies::RoutingPolicy> r)
      : index(idx),
        gpu_offset(offset),
        routing(std::move(r)),
        placement(p.placement),
        trigger(p.make_rebalance ? p.make_rebalance() : nullptr),
        coster(p.network && topo.num_gpus() <= p.graph_collectives_max_gpus
                   ? std::make_unique<hardware::CollectiveCoster>(*p.network)
                   : nullptr),
        scheduler(idx >= p.prefill_groups && !p.kv_blocks_by_rank.empty()
                      ? Scheduler(p.serving.scheduler, p.kv_blocks_by_rank)
                      : Scheduler(topo.num_gpus() / p.serving.attention_tp, p.serving.scheduler,
                                  idx < p.prefill_groups && p.prefill_kv_blocks_per_gpu > 0
                                      ? p.prefill_kv_blocks_per_gpu
                                      : p.kv_blocks_per_gpu)),
        executor(p.model, *p.cost, offset, topo, placement, *routing, *p.routing_source, p.serving.step_overhead_us,
                 coster.get(), p.serving.attention_tp) {}
};

hardware::Topology group_topology(const hardware::Topology& cluster, int ep_size) {
  const int per_node = cluster.gpus_per_node();
  if (ep_size <= per_node) {
    return hardware::Topology(1, ep_size, cluster.intra(), cluster.inter());
  }
  return hardware::Topology(ep_size / per_node, per_node, cluster.intra(), cluster.inter());
}

Simulator::Simulator(SimulationParts parts)
    : parts_(std::move(parts)),
      streams_(parts_.seed),
      generator_(parts_.workload, streams_),
      metrics_(parts_.topology.num_gpus(), parts_.serving.window) {
  const int ep = parts_.serving.ep_size;
  const int total = parts_.topology.num_gpus();
  if (ep < 1 || total % ep != 0) {
    throw core::Error("Simulator: EP size must divide the cluster's GPUs");
  }
  const hardware::Topology topo = group_topology(parts_.topology, ep);
  std::vector<int> offsets;
  for (int g = 0; g < total / ep; ++g) {
    groups_.push_back(std::make_unique<Group>(g, g * ep, parts_, topo, parts_.make_routing()));
    offsets.push_back(g * ep);
  }
  metrics_.set_group_offsets(std::move(offsets));
  group_gpus_per_node_ = topo.gpus_per_node();
  if (parts_.make_rebalance) {
    if (!parts_.network) {
      throw core::Error("Simulator: rebalancing moves experts over the network graph, which is missing");
    }
    if (!transfers_) {
      transfers_ = std::make_unique<hardware::TransferNetwork>(engine_, *parts_.network);
    }
  }
  if (parts_.prefill_groups > 0) {
    if (parts_.prefill_groups >= static_cast<int>(groups_.size()) || !parts_.network) {
      throw core::Error(
          "Simulator: disaggregation needs a decode group besides the prefill groups, and the network graph");
    }
    for (int g = 0; g < parts_.prefill_groups; ++g) {
      groups_[static_cast<std::size_t>(g)]->scheduler.set_handoff_after_prefill(true);
    }
    transfers_ = std::make_unique<hardware::TransferNetwork>(engine_, *parts_.network);
  }
  observers_.push_back(&metrics_);
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
  std::size_t& next = first == 0 ? next_group_ : next_decode_group_;
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
  }
}

void Simulator::try_start_step(Group& g) {
  if (held_start_) {
    return;  // a batch is still arriving at this instant; its last request starts every group
  }
  if (g.busy || g.paused || !g.scheduler.form_batch(requests_, g.batch)) {
    return;
  }
  g.busy = true;
  g.step_start_ns = engine_.now();
  g.last = g.executor.run(g.batch, requests_, engine_.now(), g.index, g.steps, observers_);
  if (!g.last.routed) {
    routing_exhausted_ = true;  // a finished, non-looping trace: this group serves no further step
    return;
  }
  engine_.schedule_after(core::round_ns(g.last.duration_ns), [this, &g] { on_step_end(g); });
}

void Simulator::hand_off(Group& from) {
  const auto first = static_cast<std::size_t>(parts_.prefill_groups);
  for (const auto& handoff : from.scheduler.handed_off()) {
    // Plain copies: lambdas capturing structured bindings need clang >= 16.
    const int rank = handoff.first;
    const int idx = handoff.second;
    Group& to = pick_group(first, groups_.size() - first);
    const int to_rank = to.scheduler.least_loaded_rank();
    RequestState& r = requests_[static_cast<std::size_t>(idx)];
    const double bytes = static_cast<double>(r.spec.prompt_tokens + r.generated - 1) * parts_.kv_bytes_per_token;
    const int src = from.gpu_offset + rank * parts_.serving.attention_tp;
    const int dst = to.gpu_offset + to_rank * parts_.serving.attention_tp;
    const core::Time started = engine_.now();
    Group* fromp = &from;
    Group* top = &to;
    transfers_->start(src, dst, bytes, [this, fromp, top, rank, to_rank, idx, bytes, started](core::Time done) {
      RequestState& req = requests_[static_cast<std::size_t>(idx)];
      fromp->scheduler.release(rank, req);
      req.group = top->index;
      req.rank = to_rank;
      ++kv_transfers_;
      kv_transfer_bytes_ += bytes;
      kv_transfer_ns_ += static_cast<double>(done - started);
      top->scheduler.enqueue_decode(to_rank, idx);
      try_start_step(*top);
      try_start_step(*fromp);  // freed blocks may let waiting prompts in
    });
  }
  from.scheduler.handed_off().clear();
}

bool Simulator::predict(const Group& g, std::int64_t horizon) {
  const int gpus = parts_.serving.ep_size;
  const int tp = parts_.serving.attention_tp;
  outstanding_.clear();
  if (g.trigger->prediction_queued_only()) {
    g.scheduler.next_admissions(outstanding_);
  } else {
    g.scheduler.outstanding_requests(outstanding_);
  }
  const std::size_t cells = static_cast<std::size_t>(parts_.model.num_moe_layers()) * static_cast<std::size_t>(gpus) *
                            static_cast<std::size_t>(parts_.model.routed_experts);
  predicted_.assign(2 * cells, 0.0);
  rank_prefill_.assign(static_cast<std::size_t>(g.scheduler.ranks()), 0);
  std::int64_t decode_passes = 0;
  // Prefill work, then decode work, each into its own half: the two kinds of pass are priced apart.
  for (int phase = 0; phase < 2; ++phase) {
    predict_reqs_.clear();
    predict_origin_.clear();
    for (const auto& [rank, idx] : outstanding_) {
      const RequestState& r = requests_[static_cast<std::size_t>(idx)];
      // A prompt still to prefill emits its request's next token itself: one decode step fewer.
      const std::int64_t decodes = r.spec.output_tokens - r.generated - (r.prefill_done() ? 0 : 1);
      const std::int64_t tokens =
          phase == 0 ? r.prefill_target - r.prefilled : std::min<std::int64_t>(decodes, horizon);
      if (tokens <= 0) {
        continue;
      }
      if (phase == 0) {
        rank_prefill_[static_cast<std::size_t>(rank)] += tokens;
      } else {
        decode_passes = std::max(decode_passes, tokens);
      }
      // The rank's tokens leave for the experts from all its GPUs: its first stands for them.
      predict_reqs_.push_back(workloads::RequestTokens{r.spec.id, r.spec.arrival_ns, tokens, phase == 0});
      predict_origin_.push_back(rank * tp);
    }
    if (!parts_.routing_source->expected_load(predict_reqs_, predict_origin_, gpus,
                                              std::span<double>(predicted_).subspan(phase * cells, cells))) {
      return false;
    }
  }
  // Passes: the busiest rank's prompt tokens over the step budget, and the longest decode ahead.
  const std::int64_t prefill_tokens = *std::max_element(rank_prefill_.begin(), rank_prefill_.end());
  const std::int64_t budget = parts_.serving.scheduler.max_batch_tokens;
  const std::int64_t prefill_passes = (prefill_tokens + budget - 1) / budget;  // whole steps, rounded up
  predicted_passes_[0] = static_cast<double>(prefill_passes);
  predicted_passes_[1] = static_cast<double>(decode_passes);
  return true;
}

void Simulator::advance_migration(Group& g) {
  double budget = parts_.migration_max_bytes_per_step > 0.0 ? parts_.migration_max_bytes_per_step
                                                            : std::numeric_limits<double>::infinity();
  for (const auto& [start, end] : g.executor.compute_windows()) {
    double want = 0.0;
    for (const Group::Move& m : g.compute_moves) {
      want += std::min(m.left_bytes, m.bytes_per_ns * (end - start));
    }
    if (want <= 0.0 || budget <= 0.0) {
      break;
    }
    const double scale = std::min(1.0, budget / want);  // the step's byte bound slows every move alike
    double moved = 0.0;
    double used_ns = 0.0;
    for (Group::Move& m : g.compute_moves) {
      const double b = std::min(m.left_bytes, m.bytes_per_ns * (end - start)) * scale;
      m.left_bytes -= b;
      moved += b;
      used_ns = std::max(used_ns, b / m.bytes_per_ns);
    }
    budget -= moved;
    const core::Time t0 = g.step_start_ns + static_cast<core::Time>(std::ceil(start));
    const core::Time t1 = std::max(t0, g.step_start_ns + static_cast<core::Time>(std::floor(start + used_ns)));
    for (Observer* o : observers_) {
      o->on_migration(g.index, t0, t1, moved);
    }
  }
  std::erase_if(g.compute_moves, [](const Group::Move& m) { return m.left_bytes <= 1e-6; });
  if (g.compute_moves.empty() && g.incoming) {
    g.placement = std::move(*g.incoming);  // between steps
    g.incoming.reset();
  }
}

void Simulator::maybe_rebalance(Group& g) {
  policies::RebalanceView view{g.steps - 1, g.executor.step_loads(), &g.placement, g.incoming.has_value()};
  view.arrivals = std::exchange(g.arrivals, 0);
  view.prefill_tokens = g.batch.prefill_tokens;
  view.decode_tokens = g.batch.decode_tokens;
  if (g.trigger->needs_prediction(view) && predict(g, g.trigger->prediction_horizon_steps())) {
    view.predicted_load = predicted_;
    view.predicted_passes = predicted_passes_;
  }
  std::optional<policies::Placement> next = g.trigger->on_step(view);
  if (!next || g.incoming) {
    return;  // nothing new, or the previous migration is still under way
  }
  const auto moves = policies::plan_migration(g.placement, *next, group_gpus_per_node_);
  ++rebalances_;
  if (moves.empty()) {
    g.placement = std::move(*next);
    return;
  }
  if (parts_.rebalance_in_compute_phases) {
    g.incoming = std::move(next);
    // Each move at its pair's link bandwidth (scale-up inside a node, scale-out across), shared with the
    // other moves leaving the same GPU.
    std::vector<int> leaving(static_cast<std::size_t>(parts_.serving.ep_size), 0);
    for (const policies::ExpertMove& m : moves) {
      ++leaving[static_cast<std::size_t>(m.from_gpu)];
    }
    for (const policies::ExpertMove& m : moves) {
      ++expert_moves_;
      migration_bytes_ += parts_.expert_bytes;
      const bool same_node = m.from_gpu / group_gpus_per_node_ == m.to_gpu / group_gpus_per_node_;
      const double gbps = same_node ? parts_.topology.intra().bw_gbps : parts_.topology.inter().bw_gbps;
      g.compute_moves.push_back(Group::Move{parts_.expert_bytes, gbps / leaving[static_cast<std::size_t>(m.from_gpu)]});
    }
    return;
  }
  g.incoming = std::move(next);
  g.moves_pending = static_cast<int>(moves.size());
  if (parts_.rebalance_stop_the_world) {
    g.paused = true;
    g.paused_at = engine_.now();
  }
  Group* gp = &g;
  for (const policies::ExpertMove& m : moves) {
    ++expert_moves_;
    migration_bytes_ += parts_.expert_bytes;
    transfers_->start(
        g.gpu_offset + m.from_gpu, g.gpu_offset + m.to_gpu, parts_.expert_bytes, [this, gp](core::Time done) {
          if (--gp->moves_pending > 0) {
            return;
          }
          gp->placement = std::move(*gp->incoming);  // between steps, or under a step priced on the old one
          gp->incoming.reset();
          if (gp->paused) {
            migration_stall_ns_ += static_cast<double>(done - gp->paused_at);
            gp->paused = false;
            try_start_step(*gp);
          }
        });
  }
}

void Simulator::on_step_end(Group& g) {
  const core::Time now = engine_.now();
  g.scheduler.complete(g.batch, requests_, now, observers_);
  if (transfers_) {
    hand_off(g);
  }
  StepRecord rec;
  rec.group = g.index;
  rec.step = g.steps++;
  rec.start_ns = g.step_start_ns;
  rec.end_ns = now;
  rec.prefill_tokens = g.batch.prefill_tokens;
  rec.decode_tokens = g.batch.decode_tokens;
  rec.requests = static_cast<std::int64_t>(g.batch.entries.size());
  rec.barrier_idle_ns = g.last.barrier_idle_ns;
  rec.comm_ns = g.last.comm_ns;
  rec.straggler_gap_sum_ns = g.last.straggler_gap_sum_ns;
  rec.load_std_sum = g.last.load_std_sum;
  rec.straggler_gap_max_ns = g.last.straggler_gap_max_ns;
  rec.moe_layers = g.last.moe_layers;
  rec.intra_bytes = g.last.intra_bytes;
  rec.inter_bytes = g.last.inter_bytes;
  rec.gpu_busy_ns = g.executor.gpu_busy_ns();
  for (Observer* o : observers_) {
    o->on_step(rec);
  }
  last_step_end_ns_ = std::max(last_step_end_ns_, now);
  g.busy = false;
  if (!g.compute_moves.empty()) {
    advance_migration(g);
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
  res.rebalances = rebalances_;
  for (const auto& g : groups_) {
    if (!g->trigger) {
      continue;
    }
    for (const auto& stat : g->trigger->stats()) {
      auto it = std::find_if(res.trigger_stats.begin(), res.trigger_stats.end(),
                             [&](const auto& s) { return s.first == stat.first; });
      if (it == res.trigger_stats.end()) {
        res.trigger_stats.push_back(stat);
      } else {
        it->second += stat.second;
      }
    }
  }
  res.expert_moves = expert_moves_;
  res.migration_bytes = migration_bytes_;
  res.migration_stall_ms = migration_stall_ns_ / 1e6;
  res.kv_transfers = kv_transfers_;
  res.kv_transfer_bytes = kv_transfer_bytes_;
  res.kv_transfer_ms_mean = kv_transfers_ > 0 ? kv_transfer_ns_ / static_cast<double>(kv_transfers_) / 1e6 : 0.0;
  res.end_ns = last_step_end_ns_;
  res.summary =
      summarize_run(requests_, metrics_, parts_.serving.slo, last_step_end_ns_, static_cast<int>(groups_.size()));
  res.requests = std::move(requests_);
  return res;
}

}  // namespace epsim::serving
