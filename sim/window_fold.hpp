// SPDX-License-Identifier: Apache-2.0
#pragma once
// Per-step samples folded into running totals as soon as it is certain whether they fall in the
// measurement window, so a metric's memory stays flat in run length. The window is [warm-up, last
// arrival - cool-down]; its end is known only once arrivals stop, but every step that starts before
// (latest arrival so far - cool-down) is surely in it. Undecided samples wait in a queue (steps of the
// last cool-down only) and are folded strictly in the order they came, so the totals are summed in
// the same order as over a kept list: the same bits.
#include <deque>
#include <limits>

#include "core/time.hpp"
#include "sim/serving_config.hpp"

namespace epsim::serving {

template <class Sample, class Totals>
class WindowFold {
 public:
  explicit WindowFold(const MetricsWindow& w)
      : begin_ns_(core::from_seconds(w.warmup_s)),
        cooldown_ns_(core::from_seconds(w.cooldown_s)),
        sure_end_ns_(w.cooldown_s > 0.0 ? std::numeric_limits<core::Time>::min() : k_open) {}

  /// A request arrived: steps starting up to `arrival_ns - cool-down` are surely in the window.
  void on_arrival(core::Time arrival_ns) {
    if (sure_end_ns_ != k_open && arrival_ns - cooldown_ns_ > sure_end_ns_) {
      sure_end_ns_ = arrival_ns - cooldown_ns_;
      drain();
    }
  }
  /// No request arrives after `last_arrival_ns`: the window's end is known.
  void on_arrivals_end(core::Time last_arrival_ns) {
    if (sure_end_ns_ != k_open) {
      sure_end_ns_ = last_arrival_ns - cooldown_ns_;
      ended_ = true;
      drain();
    }
  }
  /// One sample of a step that started at `start_ns`.
  void add(core::Time start_ns, const Sample& s) {
    if (pending_.empty() && decided(start_ns)) {
      fold(start_ns, s);
    } else {
      pending_.push_back({start_ns, s});
    }
  }
  /// The totals over the samples of steps starting in [begin_ns, end_ns]: the final window, whose begin
  /// is this fold's warm-up and whose end is what the cool-down and the last arrival make it
  /// (serving::measured_window). Samples already folded were decided by that same window.
  Totals total(core::Time begin_ns, core::Time end_ns) const {
    Totals t = folded_;
    for (const Pending& p : pending_) {
      if (p.start_ns >= begin_ns && p.start_ns <= end_ns) {
        t.add(p.sample);
      }
    }
    return t;
  }
  std::size_t pending() const { return pending_.size(); }

 private:
  static constexpr core::Time k_open = std::numeric_limits<core::Time>::max();
  struct Pending {
    core::Time start_ns;
    Sample sample;
  };
  bool decided(core::Time start_ns) const { return start_ns < begin_ns_ || start_ns <= sure_end_ns_ || ended_; }
  void fold(core::Time start_ns, const Sample& s) {
    if (start_ns >= begin_ns_ && start_ns <= sure_end_ns_) {
      folded_.add(s);
    }
  }
  void drain() {
    while (!pending_.empty() && decided(pending_.front().start_ns)) {
      fold(pending_.front().start_ns, pending_.front().sample);
      pending_.pop_front();
    }
  }

  core::Time begin_ns_;
  core::Time cooldown_ns_;
  core::Time sure_end_ns_;
  bool ended_ = false;
  Totals folded_{};
  std::deque<Pending> pending_;
};

}  // namespace epsim::serving
