// SPDX-License-Identifier: Apache-2.0
#include "hardware/transfer_network.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace epsim::hardware {

namespace {
constexpr double k_done_bytes = 1e-6;  // a flow with less left than this has finished (rounding)
}

TransferNetwork::TransferNetwork(core::Engine& engine, const NetworkGraph& graph)
    : engine_(engine),
      graph_(graph),
      arc_capacity_(static_cast<std::size_t>(graph.num_arcs())),
      arc_users_(static_cast<std::size_t>(graph.num_arcs())) {}

void TransferNetwork::start(int src, int dst, double bytes, Done done) {
  if (src == dst || bytes <= 0.0) {
    engine_.schedule_after(0, [this, bytes, d = std::move(done)] {
      delivered_ += std::max(bytes, 0.0);
      d(engine_.now());
    });
    return;
  }
  ++pending_;
  const core::Time latency = core::round_ns(graph_.path_latency_ns(src, dst));
  engine_.schedule_after(latency, [this, f = Flow{graph_.path(src, dst), bytes, 0.0, std::move(done)}]() mutable {
    --pending_;
    activate(std::move(f));
  });
}

void TransferNetwork::activate(Flow flow) {
  advance();
  flows_.push_back(std::move(flow));
  // Many transfers often start at the same instant (a migration's moves, a burst of KV hand-offs): one
  // rate update for all of them, at the end of this instant's events, instead of one per transfer.
  if (!update_pending_) {
    update_pending_ = true;
    engine_.schedule_after(0, [this] {
      update_pending_ = false;
      advance();
      reschedule();
    });
  }
}

void TransferNetwork::advance() {
  const double dt = static_cast<double>(engine_.now() - last_update_);
  for (Flow& f : flows_) {
    const double moved = std::min(f.remaining, f.rate * dt);
    f.remaining -= moved;
    delivered_ += moved;
  }
  last_update_ = engine_.now();
}

void TransferNetwork::reschedule() {
  engine_.cancel(next_event_);
  if (flows_.empty()) {
    return;
  }
  // Max-min fair rates by progressive filling: repeatedly find the arc whose remaining capacity split
  // among its unfrozen flows is smallest, give those flows that share and freeze them.
  for (int a = 0; a < graph_.num_arcs(); ++a) {
    arc_capacity_[static_cast<std::size_t>(a)] = graph_.arc(a).bw_gbps;
    arc_users_[static_cast<std::size_t>(a)] = 0;
  }
  for (const Flow& f : flows_) {
    for (const int a : f.route) {
      ++arc_users_[static_cast<std::size_t>(a)];
    }
  }
  frozen_.assign(flows_.size(), false);
  std::size_t left = flows_.size();
  while (left > 0) {
    int best = -1;
    double share = std::numeric_limits<double>::infinity();
    for (int a = 0; a < graph_.num_arcs(); ++a) {
      const int users = arc_users_[static_cast<std::size_t>(a)];
      if (users > 0 && arc_capacity_[static_cast<std::size_t>(a)] / users < share) {
        share = arc_capacity_[static_cast<std::size_t>(a)] / users;
        best = a;
      }
    }
    for (std::size_t i = 0; i < flows_.size(); ++i) {
      if (frozen_[i]) {
        continue;
      }
      const std::span<const int> path = flows_[i].route;
      if (std::find(path.begin(), path.end(), best) == path.end()) {
        continue;
      }
      flows_[i].rate = share;
      frozen_[i] = true;
      --left;
      for (const int a : path) {
        arc_capacity_[static_cast<std::size_t>(a)] -= share;
        --arc_users_[static_cast<std::size_t>(a)];
      }
    }
  }
  double soonest = std::numeric_limits<double>::infinity();
  for (const Flow& f : flows_) {
    soonest = std::min(soonest, f.remaining / f.rate);
  }
  next_event_ = engine_.schedule_after(static_cast<core::Time>(std::ceil(soonest)), [this] { on_completion(); });
}

void TransferNetwork::on_completion() {
  advance();
  std::vector<Flow> finished;
  for (auto it = flows_.begin(); it != flows_.end();) {
    if (it->remaining <= k_done_bytes) {
      delivered_ += it->remaining;
      finished.push_back(std::move(*it));
      it = flows_.erase(it);
    } else {
      ++it;
    }
  }
  reschedule();
  for (Flow& f : finished) {
    f.done(engine_.now());
  }
}

std::vector<double> TransferNetwork::rates() const {
  std::vector<double> out;
  out.reserve(flows_.size());
  for (const Flow& f : flows_) {
    out.push_back(f.rate);
  }
  return out;
}

}  // namespace epsim::hardware
