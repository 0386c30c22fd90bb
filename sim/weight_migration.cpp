// SPDX-License-Identifier: Apache-2.0
#include "sim/weight_migration.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <utility>

#include "core/error.hpp"
#include "policies/migration.hpp"

namespace epsim::serving {

WeightMigration::WeightMigration(core::Engine& engine, hardware::TransferNetwork* transfers, MigrationSettings settings)
    : engine_(engine), transfers_(transfers), settings_(settings) {
  if (transfers_ == nullptr && settings_.mode != policies::MigrationMode::compute_phases) {
    throw core::Error("WeightMigration: moving experts needs the network's transfers");
  }
}

void WeightMigration::start(GroupMigration& m, policies::Placement& current, policies::Placement next, int group,
                            int gpu_offset, const hardware::Topology& group_topology,
                            std::span<Observer* const> observers, std::function<void()> resume) {
  const hardware::Topology& topo = group_topology;
  const int per_node = topo.gpus_per_node();
  const auto moves = policies::plan_migration(current, next, per_node);
  ++rebalances_;
  if (moves.empty()) {
    current = std::move(next);
    return;
  }
  m.incoming = std::move(next);
  if (settings_.mode == policies::MigrationMode::compute_phases) {
    // Each move at its pair's link bandwidth (scale-up inside a node, scale-out across), shared with the
    // other moves leaving the same GPU.
    leaving_.assign(static_cast<std::size_t>(topo.num_gpus()), 0);  // a rebalance, not a step: may grow
    for (const policies::ExpertMove& mv : moves) {
      ++leaving_[static_cast<std::size_t>(mv.from_gpu)];
    }
    for (const policies::ExpertMove& mv : moves) {
      ++expert_moves_;
      bytes_ += settings_.expert_bytes;
      const bool same_node = mv.from_gpu / per_node == mv.to_gpu / per_node;
      const double gbps = same_node ? topo.intra().bw_gbps : topo.inter().bw_gbps;
      m.compute_moves.push_back(
          GroupMigration::Move{settings_.expert_bytes, gbps / leaving_[static_cast<std::size_t>(mv.from_gpu)]});
    }
    return;
  }
  if (settings_.mode == policies::MigrationMode::layer_by_layer || settings_.mode == policies::MigrationMode::chunked) {
    m.layer_moves = moves;  // plan_migration lists them layer by layer
    m.next_move = 0;
    m.next_layer = 0;
    if (settings_.mode == policies::MigrationMode::chunked) {
      m.resume = std::move(resume);
      start_chunk(m, current, group, gpu_offset, observers);
    } else {
      start_next_layer(m, current, group, gpu_offset, observers);
    }
    return;
  }
  if (settings_.mode == policies::MigrationMode::stop_the_world) {
    m.paused = true;
    m.paused_at = engine_.now();
  }
  GroupMigration* mp = &m;
  policies::Placement* cp = &current;
  auto resume_shared = std::make_shared<std::function<void()>>(std::move(resume));
  const core::Time started = engine_.now();
  const double total_bytes = settings_.expert_bytes * static_cast<double>(moves.size());
  m.layer_moves = moves;
  launch(m, 0, moves.size(), gpu_offset, [this, mp, cp, resume_shared, group, observers, started, total_bytes] {
    const core::Time done = engine_.now();
    for (Observer* o : observers) {
      o->on_migration(group, started, done, total_bytes);
    }
    *cp = std::move(*mp->incoming);  // between steps, or under a step priced on the old one
    mp->incoming.reset();
    mp->layer_moves.clear();
    if (mp->paused) {
      stall_ns_ += static_cast<double>(done - mp->paused_at);
      mp->paused = false;
      (*resume_shared)();
    }
  });
}

void WeightMigration::launch(GroupMigration& m, std::size_t first, std::size_t end, int gpu_offset,
                             std::function<void()> finish) {
  int layers_moved = 0;
  for (std::size_t i = first; i < end; ++i) {
    layers_moved += i == first || m.layer_moves[i].layer != m.layer_moves[i - 1].layer ? 1 : 0;  // layer by layer
  }
  // The engine's fixed time per moved layer follows the transfers (they are one batch per layer in the
  // engines, each then synchronised and copied into place).
  const auto overhead = static_cast<core::Time>(std::llround(settings_.layer_overhead_ns * layers_moved));
  m.moves_pending = static_cast<int>(end - first);
  auto done = std::make_shared<std::function<void()>>(std::move(finish));
  GroupMigration* mp = &m;
  for (std::size_t i = first; i < end; ++i) {
    const policies::ExpertMove& mv = m.layer_moves[i];
    ++expert_moves_;
    bytes_ += settings_.expert_bytes;
    transfers_->start(gpu_offset + mv.from_gpu, gpu_offset + mv.to_gpu, settings_.expert_bytes,
                      [this, mp, overhead, done](core::Time /*landed*/) {
                        if (--mp->moves_pending > 0) {
                          return;
                        }
                        if (overhead > 0) {
                          engine_.schedule_after(overhead, [done] { (*done)(); });
                        } else {
                          (*done)();
                        }
                      });
  }
}

void WeightMigration::switch_layers(GroupMigration& m, policies::Placement& current, int until) {
  // Layers without moves, or whose moves have landed, take their new rows.
  if (!m.incoming) {
    return;  // nothing in progress
  }
  for (; m.next_layer < until; ++m.next_layer) {
    current.layers[static_cast<std::size_t>(m.next_layer)] =
        std::move(m.incoming->layers[static_cast<std::size_t>(m.next_layer)]);
  }
}

void WeightMigration::finish_layers(GroupMigration& m, policies::Placement& current) {
  switch_layers(m, current, static_cast<int>(current.layers.size()));
  m.incoming.reset();
  m.layer_moves.clear();
}

void WeightMigration::start_next_layer(GroupMigration& m, policies::Placement& current, int group, int gpu_offset,
                                       std::span<Observer* const> observers) {
  if (!m.incoming) {
    return;  // nothing in progress
  }
  if (m.next_move >= m.layer_moves.size()) {
    finish_layers(m, current);
    return;
  }
  const int layer = m.layer_moves[m.next_move].layer;
  switch_layers(m, current, layer);
  std::size_t end = m.next_move;
  while (end < m.layer_moves.size() && m.layer_moves[end].layer == layer) {
    ++end;
  }
  const std::size_t first = std::exchange(m.next_move, end);
  const core::Time started = engine_.now();
  const double layer_bytes = settings_.expert_bytes * static_cast<double>(end - first);
  GroupMigration* mp = &m;
  policies::Placement* cp = &current;
  launch(m, first, end, gpu_offset, [this, mp, cp, group, gpu_offset, observers, started, layer_bytes, layer] {
    for (Observer* o : observers) {
      o->on_migration(group, started, engine_.now(), layer_bytes);
    }
    switch_layers(*mp, *cp, layer + 1);
    start_next_layer(*mp, *cp, group, gpu_offset, observers);
  });
}

void WeightMigration::next_chunk(GroupMigration& m, policies::Placement& current, int group, int gpu_offset,
                                 std::span<Observer* const> observers) {
  m.chunk_waiting = false;
  start_chunk(m, current, group, gpu_offset, observers);
}

void WeightMigration::start_chunk(GroupMigration& m, policies::Placement& current, int group, int gpu_offset,
                                  std::span<Observer* const> observers) {
  if (!m.incoming) {
    return;  // nothing in progress
  }
  const auto layers = static_cast<int>(current.layers.size());
  const int per_chunk = std::max(settings_.layers_per_chunk, 1);
  // Chunks without moves switch at once; the first chunk with moves stops the group.
  int chunk_end = m.next_layer;
  std::size_t end = m.next_move;
  while (end == m.next_move) {
    if (m.next_layer >= layers) {
      finish_layers(m, current);
      return;
    }
    chunk_end = std::min(m.next_layer + per_chunk, layers);
    while (end < m.layer_moves.size() && m.layer_moves[end].layer < chunk_end) {
      ++end;
    }
    if (end == m.next_move) {
      switch_layers(m, current, chunk_end);
    }
  }
  const std::size_t first = std::exchange(m.next_move, end);
  m.paused = true;
  m.paused_at = engine_.now();
  const core::Time started = engine_.now();
  const double chunk_bytes = settings_.expert_bytes * static_cast<double>(end - first);
  GroupMigration* mp = &m;
  policies::Placement* cp = &current;
  launch(m, first, end, gpu_offset, [this, mp, cp, group, observers, started, chunk_bytes, chunk_end] {
    const core::Time done = engine_.now();
    for (Observer* o : observers) {
      o->on_migration(group, started, done, chunk_bytes);
    }
    switch_layers(*mp, *cp, chunk_end);
    stall_ns_ += static_cast<double>(done - mp->paused_at);
    mp->paused = false;
    if (mp->next_move < mp->layer_moves.size()) {
      mp->chunk_waiting = true;  // the group serves a step first
    } else {
      finish_layers(*mp, *cp);
    }
    if (mp->resume) {
      mp->resume();
    }
  });
}

void WeightMigration::advance(GroupMigration& m, policies::Placement& current, int group, core::Time step_start,
                              std::span<const std::pair<double, double>> windows,
                              std::span<Observer* const> observers) {
  double budget =
      settings_.max_bytes_per_step > 0.0 ? settings_.max_bytes_per_step : std::numeric_limits<double>::infinity();
  for (const auto& [start, end] : windows) {
    double want = 0.0;
    for (const GroupMigration::Move& mv : m.compute_moves) {
      want += std::min(mv.left_bytes, mv.bytes_per_ns * (end - start));
    }
    if (want <= 0.0 || budget <= 0.0) {
      break;
    }
    const double scale = std::min(1.0, budget / want);  // the step's byte bound slows every move alike
    double moved = 0.0;
    double used_ns = 0.0;
    for (GroupMigration::Move& mv : m.compute_moves) {
      const double b = std::min(mv.left_bytes, mv.bytes_per_ns * (end - start)) * scale;
      mv.left_bytes -= b;
      moved += b;
      used_ns = std::max(used_ns, b / mv.bytes_per_ns);
    }
    budget -= moved;
    const core::Time t0 = step_start + static_cast<core::Time>(std::ceil(start));
    const core::Time t1 = std::max(t0, step_start + static_cast<core::Time>(std::floor(start + used_ns)));
    for (Observer* o : observers) {
      o->on_migration(group, t0, t1, moved);
    }
  }
  std::erase_if(m.compute_moves, [](const GroupMigration::Move& mv) { return mv.left_bytes <= 1e-6; });
  if (m.compute_moves.empty() && m.incoming) {
    current = std::move(*m.incoming);  // between steps
    m.incoming.reset();
  }
}

}  // namespace epsim::serving
