// SPDX-License-Identifier: Apache-2.0
#pragma once
// The serving simulation: arrivals and step completions are events on a core::Engine; each EP group
// steps independently (its GPUs in lockstep), requests are spread over groups round-robin and, inside a
// group, to the DP rank with the fewest outstanding requests. Weight migration (weight_migration.hpp),
// the disaggregated KV hand-off (kv_handoff.hpp) and the forecasts triggers ask for (work_forecast.hpp)
// are components of their own; metrics are observers (metrics.hpp, summary_metric.hpp).
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/event_queue.hpp"
#include "core/random_streams.hpp"
#include "hardware/cost_model.hpp"
#include "hardware/hardware_config.hpp"
#include "hardware/network_graph.hpp"
#include "hardware/topology.hpp"
#include "hardware/transfer_network.hpp"
#include "models/model_spec.hpp"
#include "policies/placement.hpp"
#include "policies/rebalance_trigger.hpp"
#include "policies/routing_policy.hpp"
#include "sim/handoff_router.hpp"
#include "sim/kv_handoff.hpp"
#include "sim/metrics.hpp"
#include "sim/pool_spec.hpp"
#include "sim/request_state.hpp"
#include "sim/scheduler.hpp"
#include "sim/serving_config.hpp"
#include "sim/step_executor.hpp"
#include "sim/summary_metric.hpp"
#include "sim/weight_migration.hpp"
#include "sim/work_forecast.hpp"
#include "workloads/request_generator.hpp"
#include "workloads/routing_source.hpp"

namespace epsim::serving {

/// One pool as the simulator runs it: its spec (pool_spec.hpp) and what was built for it.
struct PoolParts {
  PoolSpec spec;
  policies::Placement placement = {};  ///< every group of the pool starts from it (made for its first group)
  std::int64_t kv_blocks_per_gpu = 0;  ///< KV-cache blocks of each DP rank (0 = unlimited)
  /// Blocks each admitted request holds for its fixed-size state (sliding windows, linear states).
  std::int64_t state_blocks_per_request = 0;
  /// When set: each DP rank's own KV-cache blocks, which differ by the expert weights the placement puts on
  /// the rank's GPUs.
  std::vector<std::int64_t> kv_blocks_by_rank = {};
  std::function<std::unique_ptr<policies::RoutingPolicy>()> make_routing = {};  ///< one instance per group
  /// Rebalancing during serving (null: static placement): the trigger of EP group `group`, one of the
  /// pool's. A new placement's changed experts move as SimulationParts::migration says.
  std::function<std::unique_ptr<policies::RebalanceTrigger>(int group)> make_rebalance = {};
  /// Prefill pools: picks the decode group and rank of each hand-off among spec.handoff_to's pools
  /// (null: least_loaded).
  std::unique_ptr<HandoffRouter> handoff_router = {};
};

/// Everything a simulation is made of, built and validated by the caller (experiments/).
struct SimulationParts {
  models::ModelSpec model = {};
  std::unique_ptr<hardware::CostModel> cost = {};  ///< covers every GPU of the cluster
  hardware::Topology topology;                     ///< two-level view of the cluster (groups are cut from it)
  /// The cluster graph: for graph collectives, KV hand-offs and weight migrations (null when none is
  /// used: every group on the port model, nothing moving).
  std::shared_ptr<const hardware::NetworkGraph> network = {};
  hardware::CollectiveConfig collectives = {};  ///< which CollectiveModel each group's all-to-alls use
  /// The pools, in GPU order: each pool's groups take its GPUs, groups numbered across pools. Requests
  /// arrive at the pools that prefill and go from a prefill pool to the decode pools it hands off to.
  std::vector<PoolParts> pools = {};
  double kv_bytes_per_token = 0.0;       ///< moved per context token (the layers whose KV grows) by a hand-off
  double state_bytes_per_request = 0.0;  ///< moved once per request by a hand-off (sliding windows, linear states)
  /// The triggers declared they want forecasts of the queued work (PolicyNeeds::predictions).
  bool forecast_work = false;
  MigrationSettings migration = {};
  /// The cost curves the primary pool's placement was optimised against, of EP group
  /// `placement_curves_group`'s GPUs (null when the policy used none): the summary's curve_fit figures
  /// compare them with the run.
  std::shared_ptr<const policies::CostCurves> placement_curves = {};
  int placement_curves_group = 0;
  std::unique_ptr<workloads::RoutingSource> routing_source = {};
  workloads::WorkloadConfig workload = {};
  ServingConfig serving = {};
  std::uint64_t seed = 0;  ///< seeds the workload's streams (arrivals, lengths)
};

/// One colocated pool of `gpus` GPUs in groups of `ep_size` (tests and tools that build parts by hand).
PoolParts colocated_pool(int gpus, int ep_size, policies::Placement placement,
                         std::function<std::unique_ptr<policies::RoutingPolicy>()> make_routing, int attention_tp = 1);

/// The requests each DP rank of a pool was given (queued on arrival, or landed by a hand-off).
struct PoolRequests {
  std::string name;                    ///< the pool's
  std::vector<std::int64_t> per_rank;  ///< its groups' ranks, group by group
};

/// What the prefix caches did (prefix_cache.hpp): hits over the measured requests' first admissions,
/// the caches' tallies over the whole run.
struct PrefixCacheResult {
  bool enabled = false;
  std::int64_t requests = 0;       ///< measured requests admitted on a rank with a cache
  std::int64_t requests_hit = 0;   ///< of them, those that found at least one block cached
  std::int64_t prompt_tokens = 0;  ///< their prompt tokens
  std::int64_t cached_tokens = 0;  ///< of them, found cached (not computed)
  PrefixCacheTally tally;          ///< summed over the ranks

  double hit_rate_tokens() const {
    return prompt_tokens > 0 ? static_cast<double>(cached_tokens) / static_cast<double>(prompt_tokens) : 0.0;
  }
  double hit_rate_requests() const {
    return requests > 0 ? static_cast<double>(requests_hit) / static_cast<double>(requests) : 0.0;
  }
};

struct SimulationResult {
  std::vector<RequestState> requests;
  std::vector<PoolRequests> pools;
  RunSummary summary;
  /// The summary metrics' figures (summary_metric.hpp), in report order.
  std::vector<SummaryFigure> figures;
  core::Time end_ns = 0;
  bool hit_time_limit = false;
  bool routing_exhausted = false;  ///< a replayed, non-looping trace ended before the workload did
  std::int64_t routing_loops = 0;  ///< times a looping trace restarted (its routing repeats)
  /// A replayed trace's tokens against the model's group limit (all zero when not checked).
  workloads::GroupLimitReport routing_group_limit;
  std::int64_t rebalances = 0;    ///< placement changes applied
  std::int64_t expert_moves = 0;  ///< expert weight transfers they needed
  double migration_bytes = 0.0;
  double migration_stall_ms = 0.0;                   ///< stop-the-world: time groups stood still, summed over groups
  std::int64_t kv_transfers = 0;                     ///< disaggregated: KV caches moved prefill -> decode
  std::vector<policies::TriggerStat> trigger_stats;  ///< the triggers' stats(), pooled over groups
  double kv_transfer_bytes = 0.0;
  double kv_transfer_ms_mean = 0.0;
  PrefixCacheResult prefix_cache;

  /// The figure named `name` (throws core::Error when no metric reported it).
  double figure(std::string_view name) const;
};

/// Where a running simulation stands (for progress displays).
struct RunProgress {
  core::Time now_ns = 0;
  std::int64_t requests_arrived = 0;
  std::int64_t requests_finished = 0;
};

class Simulator {
 public:
  explicit Simulator(SimulationParts parts);
  ~Simulator();
  /// Observers to call besides the built-in metrics (not owned; must outlive run()).
  void add_observer(Observer* o) { observers_.push_back(o); }
  /// Calls `fn` every `every_steps` steps (over all groups) while running.
  void set_progress(std::function<void(const RunProgress&)> fn, std::int64_t every_steps) {
    progress_ = std::move(fn);
    progress_every_ = every_steps;
  }
  SimulationResult run();

 private:
  struct Pool;
  struct Group;
  void on_arrival(const workloads::RequestSpec& spec);
  // A session's next turn arriving (closed loop: it was made when the previous turn finished).
  void on_follow_up(const workloads::RequestSpec& spec);
  // Picks the group and rank of an arriving request and queues it; false when it was rejected.
  bool admit_arrival(const workloads::RequestSpec& spec, Group*& group);
  // Asks the workload for the turns that follow the requests the step just finished.
  void schedule_follow_ups(const Group& g, core::Time now);
  // Tells the observers the arrivals ended once the arrival process has and no session can make a turn.
  void end_arrivals_if_done();
  void schedule_next_arrival();
  void try_start_step(Group& g);
  void on_step_end(Group& g);
  void hand_off(Group& from);
  void maybe_rebalance(Group& g);
  // Work that arrived to an idle group: its trigger may place for it before the first step.
  void place_for_idle_start(Group& g);
  // Fills view's prediction when the trigger asked for one and the pool can forecast.
  void predict_for(Group& g, const std::optional<policies::PredictionRequest>& wanted, policies::RebalanceView& view);
  // Moves group g to `next` (if any, and no migration is under way).
  void start_migration(Group& g, std::optional<policies::Placement> next);
  // The constructor's parts: each pool's groups (and the metrics that follow their shapes), and a
  // prefill pool's router and decode ranks.
  void make_groups();
  void connect_handoffs(Pool& pool);
  Group& pick_entry_group();
  // The measured requests' cache hits and the ranks' tallies.
  PrefixCacheResult prefix_cache_result(const MeasuredWindow& window) const;
  // Refreshes the loads of a prefill pool's decode ranks from their groups' schedulers.
  void refresh_decode_ranks(Pool& from);

  SimulationParts parts_;
  core::Engine engine_;
  core::RandomStreams streams_;
  workloads::RequestGenerator generator_;
  MetricsCollector metrics_;
  std::vector<std::unique_ptr<SummaryMetric>> summary_metrics_;
  std::vector<Observer*> observers_;
  std::vector<Pool> pools_;  // as parts_.pools; groups point into it
  std::vector<std::unique_ptr<Group>> groups_;
  std::vector<std::size_t> entry_groups_;           // groups of the pools requests arrive at
  std::vector<const Scheduler*> entry_schedulers_;  // their schedulers, for cache-aware routing
  std::vector<RequestState> requests_;
  std::size_t next_group_ = 0;
  core::Time last_step_end_ns_ = 0;
  bool routing_exhausted_ = false;
  bool held_start_ = false;  // arrivals at one instant are still being queued
  core::Time last_arrival_ns_ = 0;
  bool open_loop_ended_ = false;  // the arrival process made its last request
  bool arrivals_ended_ = false;   // ... and no session can make another: the observers were told
  std::unique_ptr<hardware::TransferNetwork> transfers_;
  std::optional<WeightMigration> migration_;  // when triggers may re-place
  std::optional<KvHandoff> handoff_;          // when disaggregated
  std::unique_ptr<HandoffRouter> router_;     // when disaggregated
  std::vector<DecodeRank> decode_ranks_;      // every decode rank, groups interleaved (rank 0 of each, ...)
  std::vector<std::int64_t> served_;          // requests given to each rank, group by group
  std::vector<std::size_t> rank_base_;        // group g's first entry in served_
  std::int64_t steps_run_ = 0;
  std::function<void(const RunProgress&)> progress_;
  std::int64_t progress_every_ = 0;
  std::int64_t steps_since_progress_ = 0;
};

/// The topology of one EP group of `ep_size` GPUs cut from `cluster` (whole nodes, or part of one).
hardware::Topology group_topology(const hardware::Topology& cluster, int ep_size);

}  // namespace epsim::serving
