// SPDX-License-Identifier: Apache-2.0
#pragma once
// Moving expert weights to a new placement (policies::MigrationMode): the changed experts travel as
// timed transfers over the network while the group stops (stop_the_world) or keeps serving on the old
// placement (overlapped), or they move only in the compute phases of the group's steps, at their pair's
// link bandwidth and at most so many bytes a step (compute_phases, DIRECTOR's schedule). The new
// placement takes effect once every moved expert has landed, always between steps; layer_by_layer moves
// one layer's experts at a time while serving goes on, and each layer takes its new placement as soon
// as its own experts have landed (vLLM's async EPLB, TensorRT-LLM's online EPLB); chunked stops the group
// for a chunk of consecutive layers at a time, one chunk at each step boundary, serving a step between
// chunks (SGLang's and ATOM's layers per chunk).
#include <functional>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "core/event_queue.hpp"
#include "hardware/topology.hpp"
#include "hardware/transfer_network.hpp"
#include "policies/migration.hpp"
#include "policies/placement.hpp"
#include "policies/trigger_factory.hpp"
#include "sim/observer.hpp"

namespace epsim::serving {

struct MigrationSettings {
  policies::MigrationMode mode = policies::MigrationMode::stop_the_world;
  double max_bytes_per_step = 0.0;  ///< compute_phases: bytes one step may move (0 = no bound)
  double expert_bytes = 0.0;        ///< weights of one expert copy
  double layer_overhead_ns = 0.0;   ///< network modes: fixed time per layer whose experts move
  int layers_per_chunk = 1;         ///< chunked: consecutive layers moved at one step boundary
};

/// One EP group's migration in progress.
struct GroupMigration {
  std::optional<policies::Placement> incoming;  ///< the placement whose experts are still moving
  int moves_pending = 0;                        ///< transfers still in flight
  struct Move {
    double left_bytes = 0.0;
    double bytes_per_ns = 0.0;
  };
  std::vector<Move> compute_moves;                ///< compute-phase moves still under way
  std::vector<policies::ExpertMove> layer_moves;  ///< network modes: every move, in layer order
  std::size_t next_move = 0;                      ///< layer_by_layer, chunked: the first move not started
  int next_layer = 0;                             ///< layer_by_layer, chunked: the first layer not switched
  bool chunk_waiting = false;                     ///< chunked: the next chunk starts at the next step's end
  std::function<void()> resume;                   ///< chunked: lets the stopped group serve again
  bool paused = false;                            ///< stop-the-world: the group serves no step meanwhile
  core::Time paused_at = 0;

  bool active() const { return incoming.has_value(); }
};

class WeightMigration {
 public:
  /// `transfers` may be null only in compute_phases mode.
  WeightMigration(core::Engine& engine, hardware::TransferNetwork* transfers, MigrationSettings settings);

  /// Moves group `group`, whose GPUs start at `gpu_offset` and are laid out as `group_topology` (nodes,
  /// and the link bandwidths of compute-phase moves; pools may differ), from `current` to `next` (no
  /// migration may be active). `resume` is called when a stopped group may serve again. Network moves:
  /// `observers` (which must outlive the migration) see the whole migration when its last transfer lands.
  void start(GroupMigration& m, policies::Placement& current, policies::Placement next, int group, int gpu_offset,
             const hardware::Topology& group_topology, std::span<Observer* const> observers,
             std::function<void()> resume);
  /// Compute-phase moves through the step that just ended: `windows` are its compute phases from
  /// `step_start`; observers see each interval weights moved in.
  void advance(GroupMigration& m, policies::Placement& current, int group, core::Time step_start,
               std::span<const std::pair<double, double>> windows, std::span<Observer* const> observers);

  /// Chunked: starts the next chunk (call at a step boundary while `m.chunk_waiting`).
  void next_chunk(GroupMigration& m, policies::Placement& current, int group, int gpu_offset,
                  std::span<Observer* const> observers);

  std::int64_t rebalances() const { return rebalances_; }
  std::int64_t expert_moves() const { return expert_moves_; }
  double bytes() const { return bytes_; }
  double stall_ns() const { return stall_ns_; }

 private:
  // Starts moves [first, end) of m.layer_moves as transfers; once the last has landed and the engine's
  // time for their layers has passed, runs `finish`.
  void launch(GroupMigration& m, std::size_t first, std::size_t end, int gpu_offset, std::function<void()> finish);
  // The incoming placement's layers [m.next_layer, until) replace the current ones.
  static void switch_layers(GroupMigration& m, policies::Placement& current, int until);
  // Every remaining layer switches; the migration is over.
  static void finish_layers(GroupMigration& m, policies::Placement& current);
  // layer_by_layer: switches the layers before the next one with moves, then starts that layer's moves
  // (or, with none left, finishes the migration).
  void start_next_layer(GroupMigration& m, policies::Placement& current, int group, int gpu_offset,
                        std::span<Observer* const> observers);
  // chunked: switches the chunks without moves, then stops the group and starts the next chunk's moves
  // (or, with none left, finishes the migration).
  void start_chunk(GroupMigration& m, policies::Placement& current, int group, int gpu_offset,
                   std::span<Observer* const> observers);

  core::Engine& engine_;
  hardware::TransferNetwork* transfers_;
  MigrationSettings settings_;
  std::vector<int> leaving_;  // moves leaving each GPU (compute phases share its port)
  std::int64_t rebalances_ = 0;
  std::int64_t expert_moves_ = 0;
  double bytes_ = 0.0;
  double stall_ns_ = 0.0;
};

}  // namespace epsim::serving
