// SPDX-License-Identifier: Apache-2.0
#include "core/event_queue.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace epsim::core {

EventId Engine::schedule_at(Time at, Callback cb) {
  if (at < now_) {
    throw Error("Engine::schedule_at: time " + std::to_string(at) + " ns is before now (" + std::to_string(now_) +
                " ns)");
  }
  std::uint32_t slot = 0;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  const std::uint64_t seq = next_seq_++;
  slots_[slot].seq = seq;
  slots_[slot].cb = std::move(cb);
  heap_.push_back(Entry{at, seq, slot});
  std::push_heap(heap_.begin(), heap_.end(), later);
  ++live_;
  return EventId{seq, slot};
}

bool Engine::cancel(EventId id) {
  if (id.seq == 0 || id.slot >= slots_.size() || slots_[id.slot].seq != id.seq) {
    return false;
  }
  // The heap entry stays and is skipped when it surfaces; the slot is reusable only then, so a new
  // event cannot be confused with the cancelled one (their seq differ anyway).
  slots_[id.slot].seq = 0;
  slots_[id.slot].cb = nullptr;
  --live_;
  return true;
}

bool Engine::settle_top() {
  while (!heap_.empty()) {
    const Entry& top = heap_.front();
    if (slots_[top.slot].seq == top.seq) {
      return true;
    }
    free_slots_.push_back(top.slot);
    std::pop_heap(heap_.begin(), heap_.end(), later);
    heap_.pop_back();
  }
  return false;
}

bool Engine::step() {
  if (!settle_top()) {
    return false;
  }
  const Entry top = heap_.front();
  std::pop_heap(heap_.begin(), heap_.end(), later);
  heap_.pop_back();
  Callback cb = std::move(slots_[top.slot].cb);
  slots_[top.slot].seq = 0;
  slots_[top.slot].cb = nullptr;
  free_slots_.push_back(top.slot);
  --live_;
  now_ = top.at;
  ++executed_;
  cb();
  return true;
}

void Engine::run_until(Time until) {
  while (!stop_ && settle_top() && heap_.front().at <= until) {
    step();
  }
  if (!stop_) {
    now_ = std::max(now_, until);
  }
}

void Engine::run() {
  while (!stop_ && step()) {
  }
}

}  // namespace epsim::core
