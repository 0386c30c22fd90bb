// SPDX-License-Identifier: Apache-2.0
#include "policies/grace/affinity.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"

namespace epsim::policies {

namespace {

void check_expert(int e, int num_experts) {
  if (e < -1 || e >= num_experts) {
    throw core::Error("affinity: expert id " + std::to_string(e) + " out of range [-1, " + std::to_string(num_experts) +
                      ")");
  }
}

}  // namespace

void add_coselection(std::span<double> counts, int num_experts, std::span<const int> token_topk) {
  const auto n = static_cast<std::size_t>(num_experts);
  if (counts.size() != n * n) {
    throw core::Error("affinity: co-selection counts have " + std::to_string(counts.size()) + " entries, expected " +
                      std::to_string(n * n) + " (experts x experts)");
  }
  // Whether the id at `k` already appeared before it: a repeated id is one selection, not a new pair.
  const auto repeated = [&](std::size_t k) {
    return std::find(token_topk.begin(), token_topk.begin() + static_cast<std::ptrdiff_t>(k), token_topk[k]) !=
           token_topk.begin() + static_cast<std::ptrdiff_t>(k);
  };
  for (std::size_t a = 0; a < token_topk.size(); ++a) {
    const int i = token_topk[a];
    check_expert(i, num_experts);
    if (i < 0 || repeated(a)) {
      continue;
    }
    for (std::size_t b = a + 1; b < token_topk.size(); ++b) {
      const int j = token_topk[b];
      check_expert(j, num_experts);
      if (j < 0 || j == i || repeated(b)) {
        continue;
      }
      counts[static_cast<std::size_t>(i) * n + static_cast<std::size_t>(j)] += 1.0;
      counts[static_cast<std::size_t>(j) * n + static_cast<std::size_t>(i)] += 1.0;
    }
  }
}

AffinityMatrix affinity_from_topk(std::span<const int> topk, int top_k, int num_experts) {
  if (top_k <= 0 || num_experts <= 0 || topk.size() % static_cast<std::size_t>(top_k) != 0) {
    throw core::Error("affinity: expected tokens x top_k expert ids with top_k > 0 and experts > 0, got " +
                      std::to_string(topk.size()) + " ids for top_k " + std::to_string(top_k));
  }
  const auto n = static_cast<std::size_t>(num_experts);
  std::vector<double> counts(n * n, 0.0);
  for (std::size_t t = 0; t < topk.size(); t += static_cast<std::size_t>(top_k)) {
    add_coselection(counts, num_experts, topk.subspan(t, static_cast<std::size_t>(top_k)));
  }
  return affinity_from_counts(counts, num_experts);
}

AffinityMatrix affinity_from_counts(std::span<const double> counts, int num_experts) {
  const auto n = static_cast<std::size_t>(num_experts);
  if (num_experts <= 0 || counts.size() != n * n) {
    throw core::Error("affinity: expected " + std::to_string(n * n) +
                      " co-selection counts (experts x experts, row-major), got " + std::to_string(counts.size()));
  }
  AffinityMatrix a(num_experts, num_experts);
  for (int i = 0; i < num_experts; ++i) {
    for (int j = 0; j < num_experts; ++j) {
      const double c = counts[static_cast<std::size_t>(i) * n + static_cast<std::size_t>(j)];
      if (!std::isfinite(c) || c < 0.0) {
        throw core::Error("affinity: co-selection count [" + std::to_string(i) + "][" + std::to_string(j) +
                          "] must be finite and >= 0, got " + std::to_string(c));
      }
      a(i, j) = c;
    }
  }
  AffinityMatrix sym = 0.5 * (a + a.transpose());
  sym.diagonal().setZero();
  return sym;
}

}  // namespace epsim::policies
