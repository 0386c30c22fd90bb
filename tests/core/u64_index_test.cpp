// SPDX-License-Identifier: Apache-2.0
// U64Index against std::map under random inserts, finds and erases (collisions forced by small keys in
// a small table, so backward-shift deletion is exercised across wrapped probe runs).
#include <catch2/catch.hpp>

#include <boost/random/uniform_int_distribution.hpp>
#include <map>

#include "core/random_streams.hpp"
#include "core/u64_index.hpp"

using namespace epsim;

TEST_CASE("U64Index: random inserts, finds and erases agree with std::map") {
  core::Rng rng = core::RandomStreams(3).stream("u64_index");
  for (const std::uint64_t key_range : {40ULL, 5000ULL}) {
    core::U64Index index(4);
    std::map<std::uint64_t, std::int32_t> ref;
    boost::random::uniform_int_distribution<std::uint64_t> key(1, key_range);
    boost::random::uniform_int_distribution<int> op(0, 2);
    for (int i = 0; i < 40000; ++i) {
      const std::uint64_t k = key(rng);
      switch (op(rng)) {
        case 0:
          index.insert(k, i);
          ref[k] = i;
          break;
        case 1:
          REQUIRE(index.erase(k) == (ref.erase(k) == 1));
          break;
        default: {
          const auto it = ref.find(k);
          REQUIRE(index.find(k) == (it == ref.end() ? -1 : it->second));
        }
      }
      REQUIRE(index.size() == ref.size());
    }
    for (const auto& [k, v] : ref) {
      REQUIRE(index.find(k) == v);
    }
  }
}
