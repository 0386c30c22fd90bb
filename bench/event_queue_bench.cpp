// SPDX-License-Identifier: Apache-2.0
// Event-queue throughput: (1) the hold model: a constant population of pending events, each handler
// scheduling one successor at a random delay; (2) bulk: schedule N events, then drain them.
#include <fmt/format.h>

#include <boost/random/uniform_int_distribution.hpp>
#include <chrono>

#include "core/event_queue.hpp"
#include "core/random_streams.hpp"

using namespace epsim::core;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void hold_model(int population, std::int64_t total_events) {
  Engine engine;
  Rng rng(1);
  boost::random::uniform_int_distribution<Time> delay(1, 1'000'000);
  std::int64_t remaining = total_events;
  std::function<void()> handler = [&] {
    if (--remaining > 0) {
      engine.schedule_after(delay(rng), [&] { handler(); });
    }
  };
  for (int i = 0; i < population; ++i) {
    engine.schedule_after(delay(rng), [&] { handler(); });
  }
  const auto t0 = std::chrono::steady_clock::now();
  engine.run();
  const double s = seconds_since(t0);
  fmt::print("hold model, {:>7} pending: {:>6.1f} M events/s ({} events in {:.3f} s)\n", population,
             static_cast<double>(engine.executed()) / s / 1e6, engine.executed(), s);
}

void bulk(int n) {
  Engine engine;
  Rng rng(2);
  boost::random::uniform_int_distribution<Time> at(0, 1'000'000'000);
  std::int64_t sum = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    engine.schedule_at(at(rng), [&sum, i] { sum += i; });
  }
  engine.run();
  const double s = seconds_since(t0);
  fmt::print("bulk schedule + drain {:>8}: {:>6.1f} M events/s\n", n, n / s / 1e6);
}

}  // namespace

int main() {
  for (int population : {16, 1024, 65536}) {
    hold_model(population, 4'000'000);
  }
  bulk(1'000'000);
  return 0;
}
