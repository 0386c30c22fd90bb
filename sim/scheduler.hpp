// SPDX-License-Identifier: Apache-2.0
#pragma once
// Continuous batching for one EP group with DP attention: every GPU (rank) owns its requests and its
// paged KV cache, FCFS. Each step a rank spends its token budget on, in order: one token for each
// running decode, the next chunk of each running partially-prefilled request (chunked prefill), then new
// admissions while the running-request limit and the KV cache allow (vLLM V1: blocks are allocated for
// the tokens scheduled). A decode that finds no free block preempts the youngest running request by
// recompute: its blocks are freed and it goes back to the head of the queue, to recompute its prompt and
// the tokens it generated before emitting the next one. With speculative decoding a decode verifies its
// last token and k drafts as one entry of k + 1 tokens (fewer when its output is nearly done), holds KV
// blocks for all of them during the step, emits the accepted drafts + 1 and gives back the blocks only
// the rejected drafts used.
#include <algorithm>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "core/random_streams.hpp"
#include "core/time.hpp"
#include "sim/acceptance_model.hpp"
#include "sim/admission_caps.hpp"
#include "sim/batch.hpp"
#include "sim/kv_cache.hpp"
#include "sim/observer.hpp"
#include "sim/prefix_cache.hpp"
#include "sim/request_state.hpp"
#include "sim/serving_config.hpp"

namespace epsim::serving {

class Scheduler {
 public:
  /// `kv_blocks_per_rank` = 0: unlimited KV memory.
  Scheduler(int ranks, SchedulerConfig cfg, std::int64_t kv_blocks_per_rank = 0);
  /// One rank per entry, each with its own KV-cache blocks (> 0).
  Scheduler(SchedulerConfig cfg, const std::vector<std::int64_t>& kv_blocks_by_rank);

  /// Turns on prefix caching on every rank (prefix_cache.hpp): blocks of `block_bytes`, ranks of `gpus`
  /// GPUs. Not with static batching.
  void enable_prefix_cache(const PrefixCacheConfig& cfg, double block_bytes, int gpus);
  /// Each request holds `blocks` more for its fixed-size state (memory_plan.hpp), on every rank.
  void set_state_blocks(std::int64_t blocks);
  bool prefix_caching() const { return !ranks_.empty() && ranks_.front().prefix != nullptr; }
  /// A rank's cache (prefix_caching()).
  const PrefixCache& prefix_cache(int rank) const { return *ranks_[static_cast<std::size_t>(rank)].prefix; }
  /// The prefill time per token a fetch from a lower tier is weighed against (the group's recent steps).
  void set_recompute_ns_per_token(double ns) { recompute_ns_per_token_ = ns; }
  /// The earliest time after `now` a running request's fetched blocks land (0: none pending): the group
  /// must step then even if nothing else happens.
  core::Time next_ready_ns(const std::vector<RequestState>& requests, core::Time now) const;
  int ranks() const { return static_cast<int>(ranks_.size()); }
  /// The rank with the fewest outstanding (waiting + running) requests, or under static batching the
  /// fewest waiting (the next batch is what a new request joins); ties go to the lowest rank.
  int least_loaded_rank() const;
  /// Outstanding requests of the whole group.
  std::size_t outstanding() const;
  /// Outstanding (waiting + running) requests of one rank.
  std::size_t outstanding(int rank) const {
    const Rank& r = ranks_[static_cast<std::size_t>(rank)];
    return r.waiting.size() + r.running.size();
  }
  /// Queues a request on `rank`; returns false (and marks it rejected) if it can never fit in the rank's
  /// KV cache.
  bool enqueue(int rank, int request, std::vector<RequestState>& requests);
  /// Disaggregated decode pool: queues a request whose prompt was prefilled elsewhere and whose KV cache
  /// has arrived; admission only allocates the blocks of that context.
  void enqueue_decode(int rank, int request);
  /// Disaggregated prefill pool: requests leave their rank once their prompt is prefilled (first token
  /// out), still holding their blocks until release().
  void set_handoff_after_prefill(bool on) { handoff_ = on; }
  /// Speculative decoding: each decode verifies `acceptance.draft_tokens()` drafts, accepting a draw of
  /// `acceptance` from `rng` (the model must outlive the scheduler).
  void set_speculation(const AcceptanceModel& acceptance, core::Rng rng) {
    acceptance_ = &acceptance;
    draft_tokens_ = acceptance.draft_tokens();
    accept_rng_ = rng;
  }
  /// Requests handed off by the last complete(), and their ranks; cleared by the caller.
  std::vector<std::pair<int, int>>& handed_off() { return handed_off_; }
  /// Frees a handed-off request's blocks (its KV cache has been transferred).
  void release(int rank, RequestState& r);
  /// Fills `out` with the next step's work; returns false if there is none. `observers` see each
  /// preemption, at `now`.
  bool form_batch(std::vector<RequestState>& requests, Batch& out, core::Time now = 0,
                  std::span<Observer* const> observers = {});
  /// Applies a finished step at time `now`: advances requests, emits tokens, retires finished ones.
  void complete(const Batch& batch, std::vector<RequestState>& requests, core::Time now,
                std::span<Observer* const> observers);
  bool idle() const;
  /// (rank, request) of every waiting and running request, appended to `out`.
  void outstanding_requests(std::vector<std::pair<int, int>>& out) const;
  /// (rank, request) of the waiting requests the next admissions take, memory permitting: each rank's
  /// queue head up to its free seats (max_running_requests less those running; under static batching all
  /// of them, the running batch drains first). Appended to `out`.
  void next_admissions(std::vector<std::pair<int, int>>& out) const;
  const KvCache& kv(int rank) const { return ranks_[static_cast<std::size_t>(rank)].kv; }
  std::int64_t preemptions() const { return preemptions_; }
  /// Over every rank: requests waiting for admission, requests admitted (running), tokens the allocated
  /// KV blocks hold, and the caches' capacity in tokens (0 when KV memory is unlimited).
  std::int64_t queued_requests() const;
  std::int64_t running_requests() const;
  std::int64_t kv_used_tokens() const;
  std::int64_t kv_capacity_tokens() const;
  /// The last form_batch's ranks (rank_steps) and those whose waiting requests a cap held back: a step
  /// that preempted admits nobody (KV cache); a static batch still running holds back no cap.
  const CapTally& last_caps() const { return last_caps_; }
  /// Tokens the last complete() emitted.
  std::int64_t last_emitted() const { return emitted_; }

 private:
  struct Rank {
    std::deque<int> waiting;
    std::vector<int> running;
    KvCache kv;
    std::unique_ptr<PrefixCache> prefix;  // null: no prefix caching
  };
  // Grows `r`'s cache to `tokens` tokens if the blocks are free (or evictable from the prefix cache).
  static bool grow(Rank& rank, RequestState& r, std::int64_t tokens);
  // Blocks a rank can hand out: free, or held only by its prefix cache.
  static std::int64_t available_blocks(const Rank& rank) {
    return rank.kv.free_blocks() + (rank.prefix ? rank.prefix->evictable() : 0);
  }
  // `r` lets go of its blocks, `computed` of its tokens computed (kept by the prefix cache, if any).
  static void free_blocks(Rank& rank, RequestState& r, std::int64_t computed);
  // Admission of a prefill starting from nothing: the prefix cache's hit (tokens), counted once per request.
  std::int64_t acquire_cached(Rank& rank, RequestState& r);
  void preempt(Rank& rank, std::size_t index, std::vector<RequestState>& requests);
  // form_batch's three passes over a rank: running decodes, continuing prefills, admissions.
  void schedule_decodes(Rank& rank, std::vector<RequestState>& requests, Batch& out, std::int64_t& budget);
  void schedule_prefills(Rank& rank, std::vector<RequestState>& requests, Batch& out, std::int64_t& budget);
  // Returns the cap that stopped it with requests still waiting (none when the queue emptied).
  std::optional<AdmissionCap> admit(Rank& rank, std::vector<RequestState>& requests, Batch& out, std::int64_t& budget);
  // Tokens a decode verifies this step: its last token and the drafts its remaining output can take
  // (1 without speculative decoding), at most `budget`.
  std::int64_t verify_tokens(const RequestState& r, std::int64_t budget) const {
    return std::min(budget, 1 + std::min<std::int64_t>(draft_tokens_, r.spec.output_tokens - r.generated - 1));
  }
  // Emits a finished decode entry's tokens: its accepted drafts (drawn) and one more.
  void emit_decode(const BatchEntry& e, RequestState& r, core::Time now, std::span<Observer* const> observers);
  // After a verify step: gives back the blocks that only the rejected drafts' KV used.
  void release_rejected(const Batch& batch, std::vector<RequestState>& requests);
  // Tokens of a prefill chunk that fit in the budget and the free KV blocks.
  static std::int64_t fit_chunk(const Rank& rank, const RequestState& r, std::int64_t budget, double reserve_blocks);

  SchedulerConfig cfg_;
  std::vector<Rank> ranks_;
  std::int64_t preemptions_ = 0;
  CapTally last_caps_;
  bool unlimited_kv_ = false;
  bool handoff_ = false;
  // Set by form_batch for preempt(): who hears of a preemption, and when.
  core::Time now_ = 0;
  std::span<Observer* const> observers_;
  std::vector<std::pair<int, int>> handed_off_;  // (rank, request)
  double recompute_ns_per_token_ = 0.0;
  std::int64_t emitted_ = 0;
  // Speculative decoding (draft_tokens_ = 0: off).
  const AcceptanceModel* acceptance_ = nullptr;
  std::int64_t draft_tokens_ = 0;
  core::Rng accept_rng_;
};

}  // namespace epsim::serving
