// SPDX-License-Identifier: Apache-2.0
// What the synthetic router expects of many tokens rather than draws for one step: co-selections within a
// layer, transitions between layers and per-origin loads, from its topic distributions (the inputs
// placements profile from it).
#include <algorithm>
#include <numeric>

#include "workloads/multinomial.hpp"
#include "workloads/synthetic_router.hpp"

namespace epsim::workloads {

void SyntheticRouter::expected_coselection(int layer, core::Time t, std::span<double> out) const {
  const auto E = static_cast<std::size_t>(experts_);
  const std::vector<double> mix = topic_mix(t);
  const double pairs = static_cast<double>(top_k_) * static_cast<double>(top_k_ - 1);
  for (int topic = 0; topic < static_cast<int>(mix.size()); ++topic) {
    for (int phase = 0; phase < 2; ++phase) {
      const double w = mix[static_cast<std::size_t>(topic)] * 0.5 * pairs;
      const double* q = dist_.data() + idx(topic, phase, layer);
      for (std::size_t i = 0; i < E; ++i) {
        for (std::size_t j = 0; j < E; ++j) {
          out[i * E + j] += i == j ? 0.0 : w * q[i] * q[j];
        }
      }
    }
  }
}

void SyntheticRouter::expected_transitions(int layer, core::Time t, std::span<double> out) const {
  const auto E = static_cast<std::size_t>(experts_);
  const std::vector<double> mix = topic_mix(t);
  const double pairs = static_cast<double>(top_k_) * static_cast<double>(top_k_);
  for (int topic = 0; topic < static_cast<int>(mix.size()); ++topic) {
    for (int phase = 0; phase < 2; ++phase) {
      const double w = mix[static_cast<std::size_t>(topic)] * 0.5 * pairs;
      const double* q = dist_.data() + idx(topic, phase, layer);
      const double* next = dist_.data() + idx(topic, phase, layer + 1);
      for (std::size_t i = 0; i < E; ++i) {
        for (std::size_t j = 0; j < E; ++j) {
          out[i * E + j] += w * q[i] * next[j];
        }
      }
    }
  }
}

bool SyntheticRouter::expected_load(std::span<const RequestTokens> requests, std::span<const int> origin, int origins,
                                    std::span<double> out) {
  const auto E = static_cast<std::size_t>(experts_);
  const auto O = static_cast<std::size_t>(origins);
  const auto L = static_cast<std::size_t>(layers_);
  // Per phase (steps of one phase share a mix), then each layer's mix capped as sample() caps a step's.
  for (int phase = 0; phase < 2; ++phase) {
    if (std::none_of(requests.begin(), requests.end(),
                     [phase](const RequestTokens& q) { return (q.prefill ? 0 : 1) == phase; })) {
      continue;  // the caller asked for the other phase only
    }
    expected_.assign(L * O * E, 0.0);
    for (std::size_t r = 0; r < requests.size(); ++r) {
      const RequestTokens& req = requests[r];
      if ((req.prefill ? 0 : 1) != phase) {
        continue;
      }
      const int topic = topic_of(req.request_id, req.arrival_ns);
      const double pairs = static_cast<double>(req.tokens) * static_cast<double>(top_k_);
      const auto o = static_cast<std::size_t>(origin[r]);
      for (std::size_t l = 0; l < L; ++l) {
        const double* q = dist_.data() + idx(topic, phase, static_cast<int>(l));
        double* row = expected_.data() + (l * O + o) * E;
        for (std::size_t e = 0; e < E; ++e) {
          row[e] += pairs * q[e];
        }
      }
    }
    for (std::size_t l = 0; l < L; ++l) {
      mixed_.assign(E, 0.0);
      for (std::size_t o = 0; o < O; ++o) {
        for (std::size_t e = 0; e < E; ++e) {
          mixed_[e] += expected_[(l * O + o) * E + e];
        }
      }
      const double total = std::accumulate(mixed_.begin(), mixed_.end(), 0.0);
      if (total <= 0.0) {
        continue;
      }
      split_.assign(mixed_.begin(), mixed_.end());  // uncapped shares
      for (double& x : mixed_) {
        x /= total;
      }
      water_fill_cap(mixed_, 1.0 / static_cast<double>(top_k_));
      for (std::size_t e = 0; e < E; ++e) {
        const double scale = split_[e] > 0.0 ? mixed_[e] * total / split_[e] : 0.0;
        for (std::size_t o = 0; o < O; ++o) {
          out[(l * O + o) * E + e] += expected_[(l * O + o) * E + e] * scale;
        }
      }
    }
  }
  return true;
}

}  // namespace epsim::workloads
