#include "sim/serving/scheduler.hpp"

#include <algorithm>

namespace epsim::serving {

Scheduler::Scheduler(int ranks, SchedulerConfig cfg) : cfg_(cfg), ranks_(static_cast<std::size_t>(ranks)) {}

int Scheduler::least_loaded_rank() const {
  int best = 0;
  std::size_t best_load = ranks_[0].waiting.size() + ranks_[0].running.size();
  for (int r = 1; r < ranks(); ++r) {
    const Rank& rk = ranks_[static_cast<std::size_t>(r)];
    const std::size_t load = rk.waiting.size() + rk.running.size();
    if (load < best_load) {
      best = r;
      best_load = load;
    }
  }
  return best;
}

void Scheduler::enqueue(int rank, int request) {
  ranks_[static_cast<std::size_t>(rank)].waiting.push_back(request);
}

bool Scheduler::idle() const {
  return std::all_of(ranks_.begin(), ranks_.end(),
                     [](const Rank& r) { return r.waiting.empty() && r.running.empty(); });
}

bool Scheduler::form_batch(const std::vector<RequestState>& requests, Batch& out) {
  out.clear(ranks());
  for (std::size_t ri = 0; ri < ranks_.size(); ++ri) {
    Rank& rank = ranks_[ri];
    std::int64_t budget = cfg_.max_batch_tokens;
    // Decodes first: they are latency-critical and cost one token each.
    for (const int idx : rank.running) {
      const RequestState& r = requests[static_cast<std::size_t>(idx)];
      if (budget == 0) {
        break;
      }
      if (r.prefill_done()) {
        out.entries.push_back(BatchEntry{idx, 1, r.spec.prompt_tokens + r.generated - 1, false, true});
        out.decode_tokens += 1;
        budget -= 1;
      }
    }
    // Then continuing chunked prefills, in admission order.
    for (const int idx : rank.running) {
      const RequestState& r = requests[static_cast<std::size_t>(idx)];
      if (budget == 0) {
        break;
      }
      if (!r.prefill_done()) {
        const std::int64_t chunk = std::min(r.spec.prompt_tokens - r.prefilled, budget);
        out.entries.push_back(BatchEntry{idx, chunk, r.prefilled, true, r.prefilled + chunk == r.spec.prompt_tokens});
        out.prefill_tokens += chunk;
        budget -= chunk;
      }
    }
    // Then admissions, FCFS.
    while (budget > 0 && !rank.waiting.empty() &&
           static_cast<std::int64_t>(rank.running.size()) < cfg_.max_running_requests) {
      const int idx = rank.waiting.front();
      rank.waiting.pop_front();
      rank.running.push_back(idx);
      const RequestState& r = requests[static_cast<std::size_t>(idx)];
      const std::int64_t chunk = std::min(r.spec.prompt_tokens, budget);
      out.entries.push_back(BatchEntry{idx, chunk, 0, true, chunk == r.spec.prompt_tokens});
      out.prefill_tokens += chunk;
      budget -= chunk;
    }
    out.rank_begin[ri + 1] = static_cast<int>(out.entries.size());
  }
  return !out.empty();
}

void Scheduler::complete(const Batch& batch, std::vector<RequestState>& requests, core::Time now,
                         std::span<Observer* const> observers) {
  bool any_finished = false;
  for (const BatchEntry& e : batch.entries) {
    RequestState& r = requests[static_cast<std::size_t>(e.request)];
    if (e.prefill) {
      r.prefilled += e.tokens;
      if (e.emits_token) {
        r.generated = 1;
        r.first_token_ns = now;
        r.last_token_ns = now;
      }
    } else {
      const core::Time gap = now - r.last_token_ns;
      r.generated += 1;
      r.last_token_ns = now;
      for (Observer* o : observers) {
        o->on_token(r, gap);
      }
    }
    if (e.emits_token && r.generated >= r.spec.output_tokens) {
      r.finish_ns = now;
      any_finished = true;
      for (Observer* o : observers) {
        o->on_request_finished(r);
      }
    }
  }
  if (any_finished) {
    for (Rank& rank : ranks_) {
      std::erase_if(rank.running, [&](int idx) { return requests[static_cast<std::size_t>(idx)].finished(); });
    }
  }
}

}  // namespace epsim::serving
