// SPDX-License-Identifier: Apache-2.0
#pragma once
// Discrete-event engine: a clock and a queue of callbacks ordered by (time, insertion sequence), so
// events at equal times run in the order they were scheduled (ns-3's EventKey{ts, uid}).
#include <cstdint>
#include <functional>
#include <vector>

#include "core/time.hpp"

namespace epsim::core {

/// Handle of a scheduled event; valid until the event runs or is cancelled.
struct EventId {
  std::uint64_t seq = 0;   ///< global insertion sequence (0 = never scheduled)
  std::uint32_t slot = 0;  ///< index of the callback slot
};

class Engine {
 public:
  using Callback = std::function<void()>;

  Engine() = default;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  Time now() const { return now_; }

  /// Schedules `cb` at absolute time `at` (>= now()).
  EventId schedule_at(Time at, Callback cb);
  /// Schedules `cb` `delay` nanoseconds after now() (delay >= 0).
  EventId schedule_after(Time delay, Callback cb) { return schedule_at(now_ + delay, std::move(cb)); }
  /// Cancels a pending event; returns false if it already ran or was cancelled.
  bool cancel(EventId id);

  /// Runs events with time <= `until`, then sets the clock to `until` (if it is later than now).
  void run_until(Time until);
  /// Runs until the queue is empty.
  void run();
  /// Makes run_until() / run() return after the event under way (the clock stays where it is).
  void request_stop() { stop_ = true; }
  bool stop_requested() const { return stop_; }
  /// Runs the next event; returns false if none is pending.
  bool step();

  std::size_t pending() const { return live_; }
  std::uint64_t executed() const { return executed_; }

 private:
  struct Entry {
    Time at;
    std::uint64_t seq;
    std::uint32_t slot;
  };
  struct Slot {
    std::uint64_t seq = 0;  // seq of the event occupying the slot; 0 = free
    Callback cb;
  };
  static bool later(const Entry& a, const Entry& b) { return a.at != b.at ? a.at > b.at : a.seq > b.seq; }
  // Pops cancelled entries off the top; returns false when empty.
  bool settle_top();

  Time now_ = 0;
  std::uint64_t next_seq_ = 1;
  std::uint64_t executed_ = 0;
  std::size_t live_ = 0;
  bool stop_ = false;
  std::vector<Entry> heap_;
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_slots_;
};

}  // namespace epsim::core
