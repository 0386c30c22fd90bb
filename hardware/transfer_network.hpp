// SPDX-License-Identifier: Apache-2.0
#pragma once
// Point-to-point transfers (expert migrations, KV-cache moves) as events that occupy links: each
// transfer starts after its route's latency, then shares every arc it crosses with the other active
// transfers by max-min fairness (progressive filling); rates are recomputed whenever a transfer starts
// or ends, and each ends when its last byte has crossed.
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "core/event_queue.hpp"
#include "hardware/network_graph.hpp"

namespace epsim::hardware {

class TransferNetwork {
 public:
  /// Runs at the simulated time the transfer's last byte arrives.
  using Done = std::function<void(core::Time)>;

  TransferNetwork(core::Engine& engine, const NetworkGraph& graph);
  TransferNetwork(const TransferNetwork&) = delete;
  TransferNetwork& operator=(const TransferNetwork&) = delete;

  /// Starts moving `bytes` from GPU `src` to GPU `dst` now. src == dst completes after 0 ns.
  void start(int src, int dst, double bytes, Done done);
  std::size_t active() const { return flows_.size() + pending_; }
  double bytes_delivered() const { return delivered_; }
  /// Current rate (bytes per ns) of every active flow, in start order (for tests).
  std::vector<double> rates() const;

 private:
  struct Flow {
    std::span<const int> route;  // kept by the graph
    double remaining = 0.0;
    double rate = 0.0;
    Done done;
  };
  void activate(Flow flow);
  void advance();
  void reschedule();
  void on_completion();

  core::Engine& engine_;
  const NetworkGraph& graph_;
  std::vector<Flow> flows_;
  std::size_t pending_ = 0;
  core::Time last_update_ = 0;
  core::EventId next_event_;
  bool update_pending_ = false;
  double delivered_ = 0.0;
  // Workspace for the rate computation.
  std::vector<double> arc_capacity_;
  std::vector<int> arc_users_;
  std::vector<bool> frozen_;
};

}  // namespace epsim::hardware
