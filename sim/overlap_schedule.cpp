// SPDX-License-Identifier: Apache-2.0
#include "sim/overlap_schedule.hpp"

#include <algorithm>
#include <array>

namespace epsim::serving {

void schedule_two_batches(std::span<const HalfLayer> a, std::span<const HalfLayer> b, double tail_a_ns,
                          double tail_b_ns, OverlapTimeline& out) {
  out.compute.clear();
  out.layer_start.clear();
  double compute_free = 0.0;
  double comm_free = 0.0;
  std::array<double, 2> ready{0.0, 0.0};  // when each half's next local work may start
  const std::array<std::span<const HalfLayer>, 2> halves{a, b};
  const auto on_compute = [&](double earliest, double ns) {
    const double start = std::max(compute_free, earliest);
    compute_free = start + ns;
    if (ns > 0.0) {
      out.compute.emplace_back(start, compute_free);
    }
    return compute_free;
  };
  const auto on_comm = [&](double earliest, double ns) {
    comm_free = std::max(comm_free, earliest) + ns;
    return comm_free;
  };
  for (std::size_t l = 0; l < a.size(); ++l) {
    std::array<double, 2> local_done{};
    std::array<double, 2> dispatched{};
    std::array<double, 2> experts_done{};
    out.layer_start.push_back(std::max(compute_free, ready[0]));
    for (int m = 0; m < 2; ++m) {
      local_done[m] = on_compute(ready[m], halves[m][l].local_ns);
    }
    for (int m = 0; m < 2; ++m) {
      dispatched[m] = on_comm(local_done[m], halves[m][l].dispatch_ns);
    }
    for (int m = 0; m < 2; ++m) {
      experts_done[m] = on_compute(dispatched[m], halves[m][l].expert_ns);
    }
    for (int m = 0; m < 2; ++m) {
      ready[m] = on_comm(experts_done[m], halves[m][l].combine_ns);
    }
  }
  const double end_a = on_compute(ready[0], tail_a_ns);
  const double end_b = on_compute(ready[1], tail_b_ns);
  out.end_ns = std::max(end_a, end_b);
}

void split_batch(const Batch& batch, Batch& half0, Batch& half1) {
  const int ranks = static_cast<int>(batch.rank_begin.size()) - 1;
  half0.clear(ranks);
  half1.clear(ranks);
  std::array<Batch*, 2> halves{&half0, &half1};
  for (int r = 0; r < ranks; ++r) {
    std::array<std::int64_t, 2> tokens{0, 0};
    for (int i = batch.rank_begin[static_cast<std::size_t>(r)]; i < batch.rank_begin[static_cast<std::size_t>(r) + 1];
         ++i) {
      const BatchEntry& e = batch.entries[static_cast<std::size_t>(i)];
      if (e.tokens >= 2) {
        BatchEntry first = e;
        first.tokens = (e.tokens + 1) / 2;
        first.emits_token = false;
        BatchEntry second = e;
        second.tokens = e.tokens - first.tokens;
        second.context = e.context + first.tokens;
        half0.entries.push_back(first);
        half1.entries.push_back(second);
        tokens[0] += first.tokens;
        tokens[1] += second.tokens;
      } else {
        const int m = tokens[1] < tokens[0] ? 1 : 0;
        halves[static_cast<std::size_t>(m)]->entries.push_back(e);
        tokens[static_cast<std::size_t>(m)] += e.tokens;
      }
    }
    for (Batch* h : halves) {
      h->rank_begin[static_cast<std::size_t>(r) + 1] = static_cast<int>(h->entries.size());
    }
  }
  for (Batch* h : halves) {
    for (const BatchEntry& e : h->entries) {
      (e.prefill ? h->prefill_tokens : h->decode_tokens) += e.tokens;
    }
  }
}

}  // namespace epsim::serving
