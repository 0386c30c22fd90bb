// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "core/event_queue.hpp"

using epsim::core::Engine;
using epsim::core::Time;

TEST_CASE("events run in time order, equal times in scheduling order") {
  Engine e;
  std::vector<std::string> log;
  e.schedule_at(30, [&] { log.push_back("c30"); });
  e.schedule_at(10, [&] { log.push_back("a10"); });
  e.schedule_at(20, [&] { log.push_back("b20-first"); });
  e.schedule_at(20, [&] { log.push_back("b20-second"); });
  e.schedule_at(20, [&] { log.push_back("b20-third"); });
  e.run();
  REQUIRE(log == std::vector<std::string>{"a10", "b20-first", "b20-second", "b20-third", "c30"});
  REQUIRE(e.now() == 30);
  REQUIRE(e.executed() == 5);
}

TEST_CASE("an event scheduled at the current time from a handler runs after those already queued") {
  Engine e;
  std::vector<int> log;
  e.schedule_at(5, [&] {
    log.push_back(1);
    e.schedule_after(0, [&] { log.push_back(3); });
  });
  e.schedule_at(5, [&] { log.push_back(2); });
  e.run();
  REQUIRE(log == std::vector<int>{1, 2, 3});
}

TEST_CASE("cancelled events never run, cancel reports whether it removed something") {
  Engine e;
  std::vector<int> log;
  auto a = e.schedule_at(10, [&] { log.push_back(10); });
  auto b = e.schedule_at(20, [&] { log.push_back(20); });
  e.schedule_at(30, [&] { log.push_back(30); });
  REQUIRE(e.pending() == 3);
  REQUIRE(e.cancel(b));
  REQUIRE_FALSE(e.cancel(b));  // twice
  REQUIRE(e.pending() == 2);
  e.run();
  REQUIRE(log == std::vector<int>{10, 30});
  REQUIRE_FALSE(e.cancel(a));  // already ran
}

TEST_CASE("a recycled slot does not resurrect a cancelled handle") {
  Engine e;
  int ran = 0;
  auto a = e.schedule_at(10, [&] { ran += 1; });
  REQUIRE(e.cancel(a));
  e.run();  // pops the cancelled entry, freeing its slot
  auto b = e.schedule_at(20, [&] { ran += 100; });
  REQUIRE(b.slot == a.slot);
  REQUIRE_FALSE(e.cancel(a));
  e.run();
  REQUIRE(ran == 100);
}

TEST_CASE("run_until stops at the bound and advances the clock to it") {
  Engine e;
  std::vector<Time> log;
  for (Time t : {5, 10, 15, 20}) {
    e.schedule_at(t, [&, t] { log.push_back(t); });
  }
  e.run_until(15);
  REQUIRE(log == std::vector<Time>{5, 10, 15});
  REQUIRE(e.now() == 15);
  e.run_until(17);
  REQUIRE(e.now() == 17);
  REQUIRE(e.pending() == 1);
  e.run();
  REQUIRE(log.back() == 20);
}

TEST_CASE("scheduling in the past is an error") {
  Engine e;
  e.schedule_at(100, [] {});
  e.run();
  REQUIRE_THROWS_WITH(e.schedule_at(50, [] {}), Catch::Contains("before now"));
}

TEST_CASE("two engines are independent") {
  Engine a;
  Engine b;
  int x = 0;
  a.schedule_at(10, [&] { x += 1; });
  b.schedule_at(5, [&] { x += 10; });
  b.run();
  REQUIRE(x == 10);
  REQUIRE(a.pending() == 1);
  a.run();
  REQUIRE(x == 11);
}
