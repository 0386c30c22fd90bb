#include "sim/serving/simulator.hpp"

#include <algorithm>

#include "sim/core/error.hpp"

namespace epsim::serving {

struct Simulator::Group {
  int index = 0;
  int gpu_offset = 0;
  std::unique_ptr<policies::RoutingPolicy> routing;
  std::unique_ptr<hardware::CollectiveCoster> coster;
  Scheduler scheduler;
  StepExecutor executor;
  Batch batch;
  bool busy = false;
  std::int64_t steps = 0;
  core::Time step_start_ns = 0;
  StepResult last;

  Group(int idx, int offset, const SimulationParts& p, hardware::Topology topo,
        std::unique_ptr<policies::RoutingPolicy> r)
      : index(idx),
        gpu_offset(offset),
        routing(std::move(r)),
        coster(p.network && topo.num_gpus() <= p.graph_collectives_max_gpus
                   ? std::make_unique<hardware::CollectiveCoster>(*p.network)
                   : nullptr),
        scheduler(topo.num_gpus() / p.serving.attention_tp, p.serving.scheduler, p.kv_blocks_per_gpu),
        executor(p.model, *p.cost, offset, topo, p.placement, *routing, *p.routing_source, p.serving.step_overhead_us,
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

void Simulator::on_arrival(workloads::RequestSpec spec) {
  const bool least = parts_.serving.load_balancer == LoadBalancer::least_outstanding;
  std::size_t gi = least ? 0 : next_group_;
  if (least) {
    // The group with the fewest outstanding requests; ties to the lowest index.
    for (std::size_t i = 0; i < groups_.size(); ++i) {
      if (groups_[i]->scheduler.outstanding() < groups_[gi]->scheduler.outstanding()) {
        gi = i;
      }
    }
  }
  next_group_ = (next_group_ + 1) % groups_.size();
  Group& g = *groups_[gi];
  RequestState r;
  r.spec = spec;
  r.group = g.index;
  r.rank = g.scheduler.least_loaded_rank();
  requests_.push_back(r);
  if (g.scheduler.enqueue(r.rank, static_cast<int>(requests_.size() - 1), requests_)) {
    try_start_step(g);
  }
  schedule_next_arrival();
}

void Simulator::try_start_step(Group& g) {
  if (g.busy || !g.scheduler.form_batch(requests_, g.batch)) {
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

void Simulator::on_step_end(Group& g) {
  const core::Time now = engine_.now();
  g.scheduler.complete(g.batch, requests_, now, observers_);
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
  try_start_step(g);
}

SimulationResult Simulator::run() {
  schedule_next_arrival();
  const core::Time limit = core::from_seconds(parts_.serving.max_sim_time_s);
  engine_.run_until(limit);
  SimulationResult res;
  res.hit_time_limit = engine_.pending() > 0;
  res.routing_exhausted = routing_exhausted_;
  res.end_ns = last_step_end_ns_;
  res.summary =
      summarize_run(requests_, metrics_, parts_.serving.slo, last_step_end_ns_, static_cast<int>(groups_.size()));
  res.requests = std::move(requests_);
  return res;
}

}  // namespace epsim::serving
