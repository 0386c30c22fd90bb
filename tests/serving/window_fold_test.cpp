// SPDX-License-Identifier: Apache-2.0
// The window fold against the kept-list reduction it replaces: the same totals, bit for bit, and only
// the last cool-down's steps kept.
#include <catch2/catch.hpp>

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <vector>

#include "sim/window_fold.hpp"

using namespace epsim;

namespace {

struct Sum {
  double value = 0.0;
  std::int64_t count = 0;
  void add(double x) {
    value += x;
    ++count;
  }
};

struct Step {
  core::Time start_ns;
  double x;
};

}  // namespace

TEST_CASE("window fold: the totals of a kept list, in its order, with memory bounded by the cool-down", "[quick]") {
  boost::random::mt19937 rng(7);
  auto uniform = [&rng](std::int64_t lo, std::int64_t hi) {
    return boost::random::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  for (int trial = 0; trial < 200; ++trial) {
    serving::MetricsWindow w;
    w.warmup_s = static_cast<double>(uniform(0, 50)) * 1e-6;
    w.cooldown_s = trial % 3 == 0 ? 0.0 : static_cast<double>(uniform(1, 300)) * 1e-6;
    serving::WindowFold<double, Sum> fold(w);
    std::vector<Step> kept;
    core::Time now = 0;
    core::Time last_arrival = 0;
    std::size_t max_pending = 0;
    const int events = static_cast<int>(uniform(1, 400));
    for (int e = 0; e < events; ++e) {
      now += uniform(0, 20) * 1000;
      if (uniform(0, 2) == 0) {
        last_arrival = now;
        fold.on_arrival(now);
      } else {
        // Steps of two groups end out of start order by up to one step.
        const Step s{now - uniform(0, 15) * 1000, static_cast<double>(uniform(1, 1000)) * 0.1};
        kept.push_back(s);
        fold.add(s.start_ns, s.x);
      }
      max_pending = std::max(max_pending, fold.pending());
    }
    const bool ended = trial % 2 == 0;
    if (ended) {
      fold.on_arrivals_end(last_arrival);
    }
    const core::Time begin = core::from_seconds(w.warmup_s);
    const core::Time end =
        w.cooldown_s > 0.0 ? last_arrival - core::from_seconds(w.cooldown_s) : std::numeric_limits<core::Time>::max();
    Sum expect;
    for (const Step& s : kept) {
      if (s.start_ns >= begin && s.start_ns <= end) {
        expect.add(s.x);
      }
    }
    const Sum got = fold.total(begin, end);
    CHECK(got.count == expect.count);
    CHECK(got.value == expect.value);  // the same additions in the same order
    if (w.cooldown_s == 0.0 || ended) {
      CHECK(fold.pending() == 0);
    }
    if (w.cooldown_s == 0.0) {
      CHECK(max_pending == 0);
    }
  }
}

TEST_CASE("window fold: a long run keeps no more steps than its last cool-down holds", "[quick]") {
  serving::MetricsWindow w;
  w.cooldown_s = 1e-3;  // 1 ms: 10 steps of 100 us
  serving::WindowFold<double, Sum> fold(w);
  std::size_t max_pending = 0;
  for (core::Time t = 0; t < 1'000'000'000; t += 100'000) {  // 10,000 steps, an arrival before each
    fold.on_arrival(t);
    fold.add(t, 1.0);
    max_pending = std::max(max_pending, fold.pending());
  }
  CHECK(max_pending == 10);  // steps starting in (t - 1 ms, t]: t itself and the 9 before it
  fold.on_arrivals_end(1'000'000'000 - 100'000);
  CHECK(fold.pending() == 0);
  const Sum s = fold.total(0, 1'000'000'000 - 100'000 - 1'000'000);
  CHECK(s.count == 10'000 - 10);  // starts 0 .. 998.9 ms
}
