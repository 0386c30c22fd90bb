// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>
#include <vector>

#include "sim/scheduler.hpp"

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
  s.enqueue(0, 0, reqs);
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
    s.enqueue(0, i, reqs);
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
  std::vector<RequestState> reqs{req(0, 10, 1), req(1, 10, 1), req(2, 10, 1), req(3, 10, 1)};
  REQUIRE(s.least_loaded_rank() == 0);
  s.enqueue(0, 0, reqs);
  REQUIRE(s.least_loaded_rank() == 1);
  s.enqueue(1, 1, reqs);
  s.enqueue(2, 2, reqs);
  s.enqueue(2, 3, reqs);
  REQUIRE(s.least_loaded_rank() == 0);
}

namespace {
// Runs the scheduler alone, one time unit per step, until idle; returns the step each request emitted
// its first token in and the number of steps.
int drain(Scheduler& s, std::vector<RequestState>& reqs, std::vector<std::vector<int>>* batches = nullptr) {
  Batch b;
  int step = 0;
  while (s.form_batch(reqs, b)) {
    if (batches != nullptr) {
      std::vector<int> ids;
      for (const auto& e : b.entries) {
        ids.push_back(e.request);
      }
      batches->push_back(ids);
    }
    s.complete(b, reqs, ++step, {});
    REQUIRE(step < 10000);
  }
  return step;
}
}  // namespace

TEST_CASE("KV admission waits for memory: the second request starts when the first frees its blocks") {
  // 10 blocks of 16 tokens. A: 150-token prompt + 5 tokens (155 -> 10 blocks); B: 20 + 5.
  SchedulerConfig cfg{4096, 16};
  cfg.kv_watermark = 0.0;
  Scheduler s(1, cfg, 10);
  std::vector<RequestState> reqs{req(0, 150, 5), req(1, 20, 5)};
  s.enqueue(0, 0, reqs);
  s.enqueue(0, 1, reqs);
  drain(s, reqs);
  // A: prefill at step 1, decodes at 2..5 (finishes at 5). B cannot get a block before step 6.
  REQUIRE(reqs[0].first_token_ns == 1);
  REQUIRE(reqs[0].finish_ns == 5);
  REQUIRE(reqs[1].first_token_ns == 6);
  REQUIRE(reqs[1].finish_ns == 10);
  REQUIRE(s.preemptions() == 0);
  REQUIRE(s.kv(0).free_blocks() == 10);
}

TEST_CASE("decode growth that overflows the KV cache preempts the youngest request by recompute") {
  // 10 blocks of 16 tokens. A: prompt 80 (5 blocks), 60 out; B: prompt 70 (5 blocks), 40 out. Both are
  // admitted in step 1 and fill the cache; A's first decode needs a 6th block: B is preempted, goes back
  // to the head of the queue and later recomputes its prompt + the token it had generated (71 tokens).
  SchedulerConfig cfg{4096, 16};
  cfg.kv_watermark = 0.0;
  Scheduler s(1, cfg, 10);
  std::vector<RequestState> reqs{req(0, 80, 60), req(1, 70, 40)};
  s.enqueue(0, 0, reqs);
  s.enqueue(0, 1, reqs);
  std::vector<std::vector<int>> batches;
  drain(s, reqs, &batches);
  REQUIRE(batches[0] == std::vector<int>{0, 1});
  REQUIRE(batches[1] == std::vector<int>{0});  // B was preempted for A's decode
  REQUIRE(s.preemptions() >= 1);
  REQUIRE(reqs[1].preemptions >= 1);
  REQUIRE(reqs[0].preemptions == 0);
  // Everyone finishes with every token, and the cache is empty again.
  REQUIRE(reqs[0].generated == 60);
  REQUIRE(reqs[1].generated == 40);
  REQUIRE(reqs[1].finished());
  REQUIRE(s.kv(0).free_blocks() == 10);
  // B's first token came from its first prefill (step 1), before the preemption.
  REQUIRE(reqs[1].first_token_ns == 1);
}

TEST_CASE("a request that can never fit in the KV cache is rejected, not queued forever") {
  Scheduler s(1, SchedulerConfig{}, 4);  // 64 tokens
  std::vector<RequestState> reqs{req(0, 60, 10)};
  REQUIRE_FALSE(s.enqueue(0, 0, reqs));
  REQUIRE(reqs[0].rejected);
  REQUIRE(s.idle());
}

TEST_CASE("static batching admits a whole batch into an empty group and nothing until it has finished") {
  SchedulerConfig cfg{100, 8};
  cfg.static_batching = true;
  Scheduler s(2, cfg);
  // Prompts of 80 + 60 + 30 on rank 0 (over its 100-token budget together), 50 on rank 1.
  std::vector<RequestState> reqs{req(0, 80, 2), req(1, 60, 3), req(2, 50, 1), req(3, 10, 1), req(4, 30, 1)};
  s.enqueue(0, 0, reqs);
  s.enqueue(0, 1, reqs);
  s.enqueue(0, 4, reqs);
  s.enqueue(1, 2, reqs);
  Batch b;
  REQUIRE(s.form_batch(reqs, b));
  // Rank 0 runs request 0 (80) and request 1's first 20 tokens; rank 1 request 2 (50). Request 4 joins
  // the batch with no tokens yet: nothing is left waiting.
  REQUIRE(b.prefill_tokens == 150);
  std::vector<std::pair<int, int>> queued;
  s.next_admissions(queued);
  REQUIRE(queued.empty());
  s.complete(b, reqs, 1, {});
  // New requests join the next batch: the rank with the fewest waiting, whatever runs (rank 0 runs 3).
  REQUIRE(s.least_loaded_rank() == 0);
  // A late arrival waits for the batch to finish, though rank 1 is free and the budget has room.
  s.enqueue(1, 3, reqs);
  REQUIRE(s.least_loaded_rank() == 0);
  std::vector<std::pair<int, int>> waiting;
  s.next_admissions(waiting);
  REQUIRE(waiting == std::vector<std::pair<int, int>>{{1, 3}});
  core::Time t = 1;
  int steps = 1;
  while (reqs[0].finish_ns < 0 || reqs[1].finish_ns < 0 || reqs[2].finish_ns < 0 || reqs[4].finish_ns < 0) {
    REQUIRE(s.form_batch(reqs, b));
    for (const BatchEntry& e : b.entries) {
      REQUIRE(e.request != 3);
    }
    s.complete(b, reqs, ++t, {});
    ++steps;
  }
  // Step 2 on rank 0: request 0's decode, request 1's last 40 prompt tokens and request 4's 30 (both emit
  // a token; request 4 is done); request 1 decodes in steps 3 and 4.
  REQUIRE(steps == 4);
  REQUIRE(reqs[4].finish_ns == 2);
  REQUIRE(s.form_batch(reqs, b));
  REQUIRE(b.entries.size() == 1);
  REQUIRE(b.entries[0].request == 3);
}

TEST_CASE("static batching admits a request only while the cache holds every admitted request's context") {
  SchedulerConfig cfg{40, 8};
  cfg.static_batching = true;
  Scheduler s(1, cfg, 5);  // 5 blocks of 16 tokens; the 1 % watermark keeps 0.05 blocks
  std::vector<RequestState> reqs{req(0, 30, 2), req(1, 30, 2), req(2, 10, 1)};
  for (int i = 0; i < 3; ++i) {
    s.enqueue(0, i, reqs);
  }
  Batch b;
  REQUIRE(s.form_batch(reqs, b));
  // Request 0 takes 30 tokens (2 blocks); request 1 its first 10 (1 block) and needs 1 more for its
  // prompt; request 2's block would leave 2 - 1 - 0.05 < 1: it waits for the next batch.
  REQUIRE(b.entries.size() == 2);
  std::vector<std::pair<int, int>> next;
  s.next_admissions(next);
  REQUIRE(next == std::vector<std::pair<int, int>>{{0, 2}});
  core::Time t = 0;
  while (reqs[0].finish_ns < 0 || reqs[1].finish_ns < 0) {
    s.complete(b, reqs, ++t, {});
    if (reqs[0].finish_ns < 0 || reqs[1].finish_ns < 0) {
      REQUIRE(s.form_batch(reqs, b));
      for (const BatchEntry& e : b.entries) {
        REQUIRE(e.request != 2);
      }
    }
  }
  REQUIRE(s.preemptions() == 0);
  REQUIRE(s.form_batch(reqs, b));
  REQUIRE(b.entries.size() == 1);
  REQUIRE(b.entries[0].request == 2);
}
