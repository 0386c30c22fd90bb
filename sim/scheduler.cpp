// SPDX-License-Identifier: Apache-2.0
#include "sim/scheduler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "core/error.hpp"

namespace epsim::serving {
namespace {
constexpr const char* k_no_prefix_with_state =
    "prefix caching of a model with sliding-window or linear-attention layers is not modelled (their per-request "
    "state is not cached); turn [prefix_cache] off or use a model without them";
}  // namespace

Scheduler::Scheduler(int ranks, SchedulerConfig cfg, std::int64_t kv_blocks_per_rank)
    : cfg_(cfg), ranks_(static_cast<std::size_t>(ranks)), unlimited_kv_(kv_blocks_per_rank <= 0) {
  // "Unlimited" stays far from overflow when multiplied by the block size.
  const std::int64_t blocks = kv_blocks_per_rank > 0 ? kv_blocks_per_rank : (std::int64_t{1} << 40);
  for (Rank& r : ranks_) {
    r.kv = KvCache(blocks, cfg_.kv_block_tokens);
  }
}

Scheduler::Scheduler(SchedulerConfig cfg, const std::vector<std::int64_t>& kv_blocks_by_rank)
    : cfg_(cfg), ranks_(kv_blocks_by_rank.size()) {
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    ranks_[r].kv = KvCache(kv_blocks_by_rank[r], cfg_.kv_block_tokens);
  }
}

void Scheduler::enable_prefix_cache(const PrefixCacheConfig& cfg, double block_bytes, int gpus) {
  if (cfg_.static_batching) {
    throw core::Error("prefix caching needs continuous batching (scheduler.batching = \"continuous\")");
  }
  if (unlimited_kv_) {
    throw core::Error("prefix caching needs a KV-cache budget (the cache keeps blocks until memory is needed)");
  }
  if (!ranks_.empty() && ranks_.front().kv.state_blocks() > 0) {
    throw core::Error(k_no_prefix_with_state);
  }
  for (Rank& r : ranks_) {
    r.prefix = std::make_unique<PrefixCache>(cfg, r.kv.blocks(), r.kv.block_tokens(), block_bytes, gpus);
  }
}

void Scheduler::set_state_blocks(std::int64_t blocks) {
  if (blocks > 0 && !ranks_.empty() && ranks_.front().prefix) {
    throw core::Error(k_no_prefix_with_state);
  }
  for (Rank& r : ranks_) {
    r.kv.set_state_blocks(blocks);
  }
}

core::Time Scheduler::next_ready_ns(const std::vector<RequestState>& requests, core::Time now) const {
  core::Time next = 0;
  for (const Rank& rank : ranks_) {
    for (const int idx : rank.running) {
      const core::Time t = requests[static_cast<std::size_t>(idx)].ready_ns;
      if (t > now && (next == 0 || t < next)) {
        next = t;
      }
    }
  }
  return next;
}

void Scheduler::outstanding_requests(std::vector<std::pair<int, int>>& out) const {
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    for (const int i : ranks_[r].running) {
      out.emplace_back(static_cast<int>(r), i);
    }
    for (const int i : ranks_[r].waiting) {
      out.emplace_back(static_cast<int>(r), i);
    }
  }
}

void Scheduler::next_admissions(std::vector<std::pair<int, int>>& out) const {
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    const Rank& rank = ranks_[r];
    // Static batching: the running batch drains first, so the next one may fill every seat.
    const std::int64_t seats = cfg_.static_batching
                                   ? cfg_.max_running_requests
                                   : cfg_.max_running_requests - static_cast<std::int64_t>(rank.running.size());
    std::int64_t taken = 0;
    for (auto it = rank.waiting.begin(); it != rank.waiting.end() && taken < seats; ++it, ++taken) {
      out.emplace_back(static_cast<int>(r), *it);
    }
  }
}

int Scheduler::least_loaded_rank() const {
  // Under static batching a new request joins a later batch: only the waiting ones compete with it.
  const auto load_of = [this](const Rank& rk) {
    return rk.waiting.size() + (cfg_.static_batching ? 0 : rk.running.size());
  };
  int best = 0;
  std::size_t best_load = load_of(ranks_[0]);
  for (int r = 1; r < ranks(); ++r) {
    const std::size_t load = load_of(ranks_[static_cast<std::size_t>(r)]);
    if (load < best_load) {
      best = r;
      best_load = load;
    }
  }
  return best;
}

std::int64_t Scheduler::queued_requests() const {
  std::int64_t n = 0;
  for (const Rank& r : ranks_) {
    n += static_cast<std::int64_t>(r.waiting.size());
  }
  return n;
}

std::int64_t Scheduler::running_requests() const {
  std::int64_t n = 0;
  for (const Rank& r : ranks_) {
    n += static_cast<std::int64_t>(r.running.size());
  }
  return n;
}

std::int64_t Scheduler::kv_used_tokens() const {
  std::int64_t n = 0;
  for (const Rank& r : ranks_) {
    n += (r.kv.blocks() - available_blocks(r)) * r.kv.block_tokens();  // cached, unreferenced blocks are free
  }
  return n;
}

std::int64_t Scheduler::kv_capacity_tokens() const {
  std::int64_t n = 0;
  for (const Rank& r : ranks_) {
    n += r.kv.blocks() * r.kv.block_tokens();
  }
  return unlimited_kv_ ? 0 : n;
}

std::size_t Scheduler::outstanding() const {
  std::size_t n = 0;
  for (const Rank& r : ranks_) {
    n += r.waiting.size() + r.running.size();
  }
  return n;
}

bool Scheduler::enqueue(int rank, int request, std::vector<RequestState>& requests) {
  Rank& rk = ranks_[static_cast<std::size_t>(rank)];
  RequestState& r = requests[static_cast<std::size_t>(request)];
  r.prefill_target = r.spec.prompt_tokens;
  // Its whole context must fit in the rank's cache at some point, or it would wait forever.
  if (rk.kv.blocks_for(r.spec.prompt_tokens + r.spec.output_tokens) > rk.kv.blocks()) {
    r.rejected = true;
    return false;
  }
  rk.waiting.push_back(request);
  return true;
}

void Scheduler::enqueue_decode(int rank, int request) {
  ranks_[static_cast<std::size_t>(rank)].waiting.push_back(request);
}

void Scheduler::release(int rank, RequestState& r) {
  free_blocks(ranks_[static_cast<std::size_t>(rank)], r, r.spec.prompt_tokens + r.generated - 1);
}

void Scheduler::free_blocks(Rank& rank, RequestState& r, std::int64_t computed) {
  if (rank.prefix) {
    rank.prefix->release(r, computed, rank.kv);
  } else {
    rank.kv.give(r.kv_blocks);
    r.kv_blocks = 0;
  }
}

bool Scheduler::idle() const {
  return std::all_of(ranks_.begin(), ranks_.end(),
                     [](const Rank& r) { return r.waiting.empty() && r.running.empty(); });
}

bool Scheduler::grow(Rank& rank, RequestState& r, std::int64_t tokens) {
  const std::int64_t extra = rank.kv.extra_for(r.kv_blocks, tokens);
  if (!rank.kv.can_take(extra) && rank.prefix && extra <= available_blocks(rank)) {
    rank.prefix->evict(extra - rank.kv.free_blocks(), rank.kv);
  }
  if (!rank.kv.can_take(extra)) {
    return false;
  }
  rank.kv.take(extra);
  r.kv_blocks += extra;
  return true;
}

void Scheduler::preempt(Rank& rank, std::size_t index, std::vector<RequestState>& requests) {
  const int idx = rank.running[index];
  RequestState& r = requests[static_cast<std::size_t>(idx)];
  // What it computed stays in the prefix cache, if any: its recompute may find it there.
  free_blocks(rank, r, r.prefill_done() ? r.spec.prompt_tokens + r.generated - 1 : r.prefilled);
  r.prefilled = 0;
  // Recompute: the prompt and every token generated so far, then the next token comes out.
  r.prefill_target = r.spec.prompt_tokens + r.generated;
  ++r.preemptions;
  ++preemptions_;
  rank.running.erase(rank.running.begin() + static_cast<std::ptrdiff_t>(index));
  rank.waiting.push_front(idx);
  for (Observer* o : observers_) {
    o->on_preemption(r, now_);
  }
}

std::int64_t Scheduler::fit_chunk(const Rank& rank, const RequestState& r, std::int64_t budget, double reserve_blocks) {
  std::int64_t chunk = std::min(r.prefill_target - r.prefilled, budget);
  // Tokens that fit: the free blocks (less the reserve) plus the room left in the request's last block.
  const auto usable =
      static_cast<std::int64_t>(std::floor(static_cast<double>(available_blocks(rank)) - reserve_blocks));
  // A request's first chunk also takes its fixed state's blocks (kv_cache.hpp); they hold no tokens.
  const std::int64_t state = rank.kv.state_blocks();
  const std::int64_t token_blocks = r.kv_blocks > 0 ? r.kv_blocks - state : 0;
  const std::int64_t free_blocks = usable - (r.kv_blocks > 0 ? 0 : state);
  const std::int64_t room = std::max<std::int64_t>(0, free_blocks) * rank.kv.block_tokens() +
                            (token_blocks * rank.kv.block_tokens() - r.prefilled);
  chunk = std::min(chunk, room);
  return std::max<std::int64_t>(0, chunk);
}

void Scheduler::schedule_decodes(Rank& rank, std::vector<RequestState>& requests, Batch& out, std::int64_t& budget) {
  // One token each. A decode that cannot grow its cache preempts the youngest running request (possibly
  // itself).
  for (std::size_t i = 0; i < rank.running.size() && budget > 0; ++i) {
    RequestState& r = requests[static_cast<std::size_t>(rank.running[i])];
    if (!r.prefill_done()) {
      continue;
    }
    // Its last token (and any drafts) on top of the context it has cached.
    const std::int64_t context = r.spec.prompt_tokens + r.generated - 1;
    const std::int64_t verify = verify_tokens(r, budget);
    const std::int64_t tokens_after = context + verify;
    bool fits = grow(rank, r, tokens_after);
    while (!fits) {
      // The youngest that holds blocks (under static batching, requests admitted into the batch may
      // hold none yet: preempting them would free nothing).
      std::size_t victim = rank.running.size();
      for (std::size_t j = rank.running.size(); j-- > i + 1;) {
        if (requests[static_cast<std::size_t>(rank.running[j])].kv_blocks > 0) {
          victim = j;
          break;
        }
      }
      if (victim == rank.running.size()) {
        break;
      }
      preempt(rank, victim, requests);
      fits = grow(rank, r, tokens_after);
    }
    if (!fits) {
      preempt(rank, i, requests);
      break;
    }
    out.entries.push_back(BatchEntry{
        .request = rank.running[i], .tokens = verify, .context = context, .prefill = false, .emits_token = true});
    out.decode_tokens += verify;
    budget -= verify;
  }
}

void Scheduler::schedule_prefills(Rank& rank, std::vector<RequestState>& requests, Batch& out, std::int64_t& budget) {
  // Continuing chunked prefills, in admission order, as far as memory allows (no preemption).
  for (const int idx : rank.running) {
    RequestState& r = requests[static_cast<std::size_t>(idx)];
    if (budget == 0) {
      break;
    }
    if (!r.prefill_done() && r.ready_ns <= now_) {  // (blocks fetched from a lower tier have landed)
      const std::int64_t chunk = fit_chunk(rank, r, budget, 0.0);
      if (chunk > 0 && grow(rank, r, r.prefilled + chunk)) {
        out.entries.push_back(BatchEntry{.request = idx,
                                         .tokens = chunk,
                                         .context = r.prefilled,
                                         .prefill = true,
                                         .emits_token = r.prefilled + chunk == r.prefill_target});
        out.prefill_tokens += chunk;
        budget -= chunk;
      }
    }
  }
}

std::int64_t Scheduler::acquire_cached(Rank& rank, RequestState& r) {
  // At least the last prompt token is computed: its logits give the next token (as in vLLM).
  const std::int64_t max_blocks = (r.prefill_target - 1) / rank.kv.block_tokens();
  r.prefilled = rank.prefix->acquire(r, max_blocks, rank.kv, now_, recompute_ns_per_token_);
  return r.prefilled;
}

std::optional<AdmissionCap> Scheduler::admit(Rank& rank, std::vector<RequestState>& requests, Batch& out,
                                             std::int64_t& budget) {
  // FCFS: the head of the queue waits for memory (nothing overtakes it).
  const double reserve = cfg_.kv_watermark * static_cast<double>(rank.kv.blocks());
  // Static batching: blocks the requests admitted by this call still need for their whole context (they
  // join the batch now, their prompts are chunked into its later steps), so admissions stop while the
  // cache could not hold them all.
  std::int64_t promised = 0;
  const auto context_of = [](const RequestState& q) {
    return q.prefill_done() ? q.spec.prompt_tokens + q.generated : q.prefill_target;
  };
  while ((budget > 0 || cfg_.static_batching) && !rank.waiting.empty() &&
         static_cast<std::int64_t>(rank.running.size()) < cfg_.max_running_requests) {
    const int idx = rank.waiting.front();
    RequestState& r = requests[static_cast<std::size_t>(idx)];
    // (The first of a batch on an empty rank needs no reserve: enqueue() let in only what fits.)
    const double keep = rank.running.empty() ? 0.0 : reserve;
    if (cfg_.static_batching && static_cast<double>(rank.kv.free_blocks() - promised) - keep <
                                    static_cast<double>(rank.kv.blocks_for(context_of(r)))) {
      break;  // the head waits for the next batch
    }
    if (budget <= 0) {
      // Static batching: the batch takes it now; its work starts in a later step of this batch.
      rank.waiting.pop_front();
      rank.running.push_back(idx);
      promised += rank.kv.blocks_for(context_of(r));
      continue;
    }
    if (r.prefill_done()) {
      // A decode whose KV cache was transferred in: allocate that context plus this step's tokens.
      const std::int64_t verify = verify_tokens(r, budget);
      const std::int64_t tokens_after = r.spec.prompt_tokens + r.generated - 1 + verify;
      if (!grow(rank, r, tokens_after)) {
        break;
      }
      rank.waiting.pop_front();
      rank.running.push_back(idx);
      out.entries.push_back(BatchEntry{
          .request = idx, .tokens = verify, .context = tokens_after - verify, .prefill = false, .emits_token = true});
      out.decode_tokens += verify;
      budget -= verify;
      continue;
    }
    const std::int64_t cached = rank.prefix ? acquire_cached(rank, r) : 0;
    if (r.ready_ns > now_) {
      if (r.cached_tokens < 0) {
        r.cached_tokens = cached;
      }
      out.cached_tokens += cached;
      // Its cached blocks are still coming from a lower tier: it takes its seat, its prefill starts after.
      rank.waiting.pop_front();
      rank.running.push_back(idx);
      continue;
    }
    const std::int64_t chunk = fit_chunk(rank, r, budget, reserve);
    if (chunk == 0 || !grow(rank, r, r.prefilled + chunk)) {
      if (rank.prefix) {
        free_blocks(rank, r, cached);  // it waits: the blocks it found stay cached for it
        r.prefilled = 0;
      }
      break;
    }
    if (r.cached_tokens < 0 && rank.prefix) {
      r.cached_tokens = cached;  // counted at its first admission
    }
    out.cached_tokens += cached;
    rank.waiting.pop_front();
    rank.running.push_back(idx);
    out.entries.push_back(BatchEntry{.request = idx,
                                     .tokens = chunk,
                                     .context = r.prefilled,
                                     .prefill = true,
                                     .emits_token = r.prefilled + chunk == r.prefill_target});
    out.prefill_tokens += chunk;
    budget -= chunk;
    if (cfg_.static_batching) {
      promised += rank.kv.blocks_for(context_of(r)) - r.kv_blocks;
    }
  }
  // The loop breaks only for memory; otherwise the seats or the budget ended it.
  if (rank.waiting.empty()) {
    return std::nullopt;
  }
  if (static_cast<std::int64_t>(rank.running.size()) >= cfg_.max_running_requests) {
    return AdmissionCap::seats;
  }
  if (budget <= 0 && !cfg_.static_batching) {
    return AdmissionCap::batch_tokens;
  }
  return AdmissionCap::kv_cache;
}

bool Scheduler::form_batch(std::vector<RequestState>& requests, Batch& out, core::Time now,
                           std::span<Observer* const> observers) {
  now_ = now;
  observers_ = observers;
  out.clear(ranks());
  last_caps_ = CapTally{};
  last_caps_.rank_steps = ranks();
  // Static batching admits only into an empty group: the running batch finishes first.
  const bool admit_now = !cfg_.static_batching ||
                         std::all_of(ranks_.begin(), ranks_.end(), [](const Rank& rk) { return rk.running.empty(); });
  for (std::size_t ri = 0; ri < ranks_.size(); ++ri) {
    Rank& rank = ranks_[ri];
    std::int64_t budget = cfg_.max_batch_tokens;
    const std::int64_t preempted_before = preemptions_;
    schedule_decodes(rank, requests, out, budget);  // latency-critical first
    schedule_prefills(rank, requests, out, budget);
    // As in vLLM V1, a step that had to preempt admits nobody.
    if (admit_now && preemptions_ == preempted_before) {
      if (const std::optional<AdmissionCap> cap = admit(rank, requests, out, budget)) {
        ++last_caps_[*cap];
      }
    } else if (admit_now && !rank.waiting.empty()) {
      ++last_caps_[AdmissionCap::kv_cache];  // it preempted: memory held the queue back
    }
    out.rank_begin[ri + 1] = static_cast<int>(out.entries.size());
  }
  observers_ = {};
  return !out.empty();
}

void Scheduler::complete(const Batch& batch, std::vector<RequestState>& requests, core::Time now,
                         std::span<Observer* const> observers) {
  bool any_finished = false;
  emitted_ = 0;
  for (const BatchEntry& e : batch.entries) {
    RequestState& r = requests[static_cast<std::size_t>(e.request)];
    if (e.prefill) {
      r.prefilled += e.tokens;
      if (prefix_caching()) {  // a later prompt may reuse them at once
        Rank& rank = ranks_[static_cast<std::size_t>(r.rank)];
        rank.prefix->insert_computed(r, r.prefilled, rank.kv);
      }
      if (e.emits_token) {
        // The (re)computed context emits the next token.
        if (r.first_token_ns < 0) {
          r.first_token_ns = now;
          for (Observer* o : observers) {
            o->on_first_token(r);
          }
        } else {
          for (Observer* o : observers) {
            o->on_token(r, now - r.last_token_ns);
          }
        }
        r.generated += 1;
        r.last_token_ns = now;
        ++emitted_;
      }
    } else {
      emit_decode(e, r, now, observers);
    }
    if (e.emits_token && r.generated >= r.spec.output_tokens) {
      r.finish_ns = now;
      any_finished = true;
      for (Observer* o : observers) {
        o->on_request_finished(r);
      }
    }
  }
  if (draft_tokens_ > 0) {
    release_rejected(batch, requests);
  }
  if (handoff_) {
    // The prompt is done: the request leaves for the decode pool (it keeps its blocks until the KV
    // transfer ends). Requests that already finished (one output token) simply finish here.
    for (std::size_t ri = 0; ri < ranks_.size(); ++ri) {
      std::erase_if(ranks_[ri].running, [&](int idx) {
        const RequestState& r = requests[static_cast<std::size_t>(idx)];
        if (!r.finished() && r.prefill_done()) {
          handed_off_.emplace_back(static_cast<int>(ri), idx);
          return true;
        }
        return false;
      });
    }
  }
  if (any_finished) {
    for (Rank& rank : ranks_) {
      std::erase_if(rank.running, [&](int idx) {
        RequestState& r = requests[static_cast<std::size_t>(idx)];
        if (r.finished()) {
          // Its KV holds every token but the last it emitted (never fed back): a next turn repeats them.
          free_blocks(rank, r, r.spec.prompt_tokens + r.generated - 1);
          return true;
        }
        return false;
      });
    }
  }
}

void Scheduler::emit_decode(const BatchEntry& e, RequestState& r, core::Time now,
                            std::span<Observer* const> observers) {
  std::int64_t accepted = 0;
  if (e.tokens > 1) {
    // The drafts proposed were capped by the remaining output, so A + 1 never passes it.
    accepted = acceptance_->draw(accept_rng_, static_cast<int>(e.tokens - 1));
    for (Observer* o : observers) {
      o->on_verify(r, e.tokens - 1, accepted);
    }
  }
  // The tokens of one step stream out together: the first carries the gap since the last step's, the
  // others none (tokens.csv shows them at one instant; TPOT is unaffected).
  const core::Time gap = now - r.last_token_ns;
  emitted_ += accepted + 1;
  for (std::int64_t j = 0; j <= accepted; ++j) {
    r.generated += 1;
    r.last_token_ns = now;
    for (Observer* o : observers) {
      o->on_token(r, j == 0 ? gap : 0);
    }
  }
}

void Scheduler::release_rejected(const Batch& batch, std::vector<RequestState>& requests) {
  for (std::size_t ri = 0; ri < ranks_.size(); ++ri) {
    Rank& rank = ranks_[ri];
    for (int i = batch.rank_begin[ri]; i < batch.rank_begin[ri + 1]; ++i) {
      const BatchEntry& e = batch.entries[static_cast<std::size_t>(i)];
      RequestState& r = requests[static_cast<std::size_t>(e.request)];
      if (e.prefill || e.tokens == 1 || r.finished()) {
        continue;  // finished requests give back all their blocks below
      }
      // The cache keeps the context and the accepted tokens: prompt + generated - 1 (the last emitted
      // token's KV is written when it is verified next step).
      const std::int64_t keep = rank.kv.blocks_for(r.spec.prompt_tokens + r.generated - 1);
      if (r.kv_blocks > keep) {
        rank.kv.give(r.kv_blocks - keep);
        r.kv_blocks = keep;
      }
    }
  }
}

}  // namespace epsim::serving
