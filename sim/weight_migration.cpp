// SPDX-License-Identifier: Apache-2.0
#include "sim/weight_migration.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

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
  m.moves_pending = static_cast<int>(moves.size());
  if (settings_.mode == policies::MigrationMode::stop_the_world) {
    m.paused = true;
    m.paused_at = engine_.now();
  }
  GroupMigration* mp = &m;
  policies::Placement* cp = &current;
  auto resume_shared = std::make_shared<std::function<void()>>(std::move(resume));
  const core::Time started = engine_.now();
  const double total_bytes = settings_.expert_bytes * static_cast<double>(moves.size());
  for (const policies::ExpertMove& mv : moves) {
    ++expert_moves_;
    bytes_ += settings_.expert_bytes;
    transfers_->start(gpu_offset + mv.from_gpu, gpu_offset + mv.to_gpu, settings_.expert_bytes,
                      [this, mp, cp, resume_shared, group, observers, started, total_bytes](core::Time done) {
                        if (--mp->moves_pending > 0) {
                          return;
                        }
                        for (Observer* o : observers) {
                          o->on_migration(group, started, done, total_bytes);
                        }
                        *cp = std::move(*mp->incoming);  // between steps, or under a step priced on the old one
                        mp->incoming.reset();
                        if (mp->paused) {
                          stall_ns_ += static_cast<double>(done - mp->paused_at);
                          mp->paused = false;
                          (*resume_shared)();
                        }
                      });
  }
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
