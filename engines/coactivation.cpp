// SPDX-License-Identifier: Apache-2.0
#include "engines/coactivation.hpp"

#include <fmt/format.h>

namespace epsim::engines {

PairTally::PairTally(const trace::Header& h, std::size_t blocks)
    : experts_(h.experts()), top_k_(h.top_k()), counts_(blocks * h.experts() * h.experts(), 0.0) {}

CoactivationTally::CoactivationTally(const trace::Header& h) : PairTally(h, h.moe_layers()) {}

void CoactivationTally::add(const trace::Step& s) {
  const std::size_t E = experts_;
  for (int l = 0; l < s.layers_size(); ++l) {
    const auto& ids = s.layers(l).token_experts();
    double* layer = counts_.data() + static_cast<std::size_t>(l) * E * E;
    for (int t = 0; t + static_cast<int>(top_k_) <= ids.size(); t += static_cast<int>(top_k_)) {
      for (std::size_t a = 0; a < top_k_; ++a) {
        for (std::size_t b = 0; b < top_k_; ++b) {
          if (a != b) {
            layer[ids[t + static_cast<int>(a)] * E + ids[t + static_cast<int>(b)]] += 1.0;
          }
        }
      }
    }
  }
}

TransitionTally::TransitionTally(const trace::Header& h) : PairTally(h, h.moe_layers() > 0 ? h.moe_layers() - 1 : 0) {}

void TransitionTally::add(const trace::Step& s) {
  const std::size_t E = experts_;
  const auto k = static_cast<int>(top_k_);
  for (int l = 0; l + 1 < s.layers_size(); ++l) {
    const auto& from = s.layers(l).token_experts();
    const auto& to = s.layers(l + 1).token_experts();
    if (k == 0 || from.size() != to.size()) {
      continue;  // the same tokens in both layers, or nothing to pair
    }
    double* pair = counts_.data() + static_cast<std::size_t>(l) * E * E;
    for (int t = 0; t + k <= from.size(); t += k) {
      for (int a = 0; a < k; ++a) {
        for (int b = 0; b < k; ++b) {
          pair[static_cast<std::size_t>(from[t + a]) * E + to[t + b]] += 1.0;
        }
      }
    }
  }
}

std::string coactivation_csv(const std::vector<double>& counts, std::size_t layers, std::size_t experts) {
  std::string out = "layer,expert_a,expert_b,tokens\n";
  for (std::size_t l = 0; l < layers; ++l) {
    for (std::size_t a = 0; a < experts; ++a) {
      for (std::size_t b = a + 1; b < experts; ++b) {
        const double c = counts[(l * experts + a) * experts + b];
        if (c > 0.0) {
          out += fmt::format("{},{},{},{}\n", l, a, b, c);
        }
      }
    }
  }
  return out;
}

}  // namespace epsim::engines
