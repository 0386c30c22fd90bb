#include <catch2/catch.hpp>
#include <vector>

#include "sim/serving/scheduler.hpp"

using namespace epsim;
using namespace epsim::serving;

namespace {
RequestState req(std::int64_t id, std::int64_t prompt, std::int64_t output) {
  RequestState r;
  r.spec = workloads::RequestSpec{id, 0, prompt, output};
  return r;
}
}  // namespace

TEST_CASE("chunked prefill: a long prompt is split into budget-sized chunks, then decodes") {
  Scheduler s(1, SchedulerConfig{4096, 16});
  std::vector<RequestState> reqs{req(0, 10000, 3)};
  s.enqueue(0, 0);
  Batch b;
  std::vector<std::int64_t> chunks;
  core::Time t = 0;
  while (s.form_batch(reqs, b)) {
    REQUIRE(b.entries.size() == 1);
    chunks.push_back(b.entries[0].tokens);
    if (b.entries[0].prefill) {
      REQUIRE(b.entries[0].context == reqs[0].prefilled);
    } else {
      REQUIRE(b.entries[0].context == 10000 + reqs[0].generated - 1);
    }
    t += 10;
    s.complete(b, reqs, t, {});
  }
  // 4096 + 4096 + 1808 prompt tokens; the last chunk emits token 1, then 2 decodes.
  REQUIRE(chunks == std::vector<std::int64_t>{4096, 4096, 1808, 1, 1});
  REQUIRE(reqs[0].first_token_ns == 30);
  REQUIRE(reqs[0].finish_ns == 50);
  REQUIRE(s.idle());
}

TEST_CASE("decodes come before prefill chunks and admissions respect the budget and running limit") {
  Scheduler s(1, SchedulerConfig{100, 2});
  std::vector<RequestState> reqs{req(0, 10, 5), req(1, 150, 5), req(2, 10, 5)};
  for (int i = 0; i < 3; ++i) {
    s.enqueue(0, i);
  }
  Batch b;
  REQUIRE(s.form_batch(reqs, b));
  // Request 0 (10 tokens) then request 1's first 90 tokens; request 2 waits (running limit 2).
  REQUIRE(b.entries.size() == 2);
  REQUIRE(b.entries[0].tokens == 10);
  REQUIRE(b.entries[0].emits_token);
  REQUIRE(b.entries[1].tokens == 90);
  REQUIRE_FALSE(b.entries[1].emits_token);
  s.complete(b, reqs, 1, {});
  REQUIRE(s.form_batch(reqs, b));
  // Decode of request 0 first, then the remaining 60 prompt tokens of request 1.
  REQUIRE(b.entries.size() == 2);
  REQUIRE_FALSE(b.entries[0].prefill);
  REQUIRE(b.entries[0].request == 0);
  REQUIRE(b.entries[1].tokens == 60);
  REQUIRE(b.prefill_tokens == 60);
  REQUIRE(b.decode_tokens == 1);
}

TEST_CASE("requests go to the least loaded rank, ties to the lowest") {
  Scheduler s(3, SchedulerConfig{});
  REQUIRE(s.least_loaded_rank() == 0);
  s.enqueue(0, 0);
  REQUIRE(s.least_loaded_rank() == 1);
  s.enqueue(1, 1);
  s.enqueue(2, 2);
  s.enqueue(2, 3);
  REQUIRE(s.least_loaded_rank() == 0);
}
