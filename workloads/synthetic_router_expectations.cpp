// SPDX-License-Identifier: Apache-2.0
// What the synthetic router expects of many tokens rather than draws for one step: co-selections within a
// layer, transitions between layers and per-origin loads, from its topic distributions (the inputs
// placements profile from it).
#include <vector>

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
  // Each cell is capped already, so a request's expectation is its pairs times its cell's row.
  for (std::size_t r = 0; r < requests.size(); ++r) {
    const RequestTokens& req = requests[r];
    const int phase = req.prefill ? 0 : 1;
    const int topic = topic_of(req.request_id, req.arrival_ns);
    const double pairs = static_cast<double>(req.tokens) * static_cast<double>(top_k_);
    const auto o = static_cast<std::size_t>(origin[r]);
    for (std::size_t l = 0; l < L; ++l) {
      const double* q = dist_.data() + idx(topic, phase, static_cast<int>(l));
      double* row = out.data() + (l * O + o) * E;
      for (std::size_t e = 0; e < E; ++e) {
        row[e] += pairs * q[e];
      }
    }
  }
  return true;
}

}  // namespace epsim::workloads
