// SPDX-License-Identifier: Apache-2.0
#include "engines/coactivation.hpp"

#include <fmt/format.h>

namespace epsim::engines {

CoactivationTally::CoactivationTally(const trace::Header& h)
    : experts_(h.experts()), top_k_(h.top_k()), counts_(std::size_t{h.moe_layers()} * h.experts() * h.experts(), 0.0) {}

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
