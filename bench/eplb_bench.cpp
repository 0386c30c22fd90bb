// SPDX-License-Identifier: Apache-2.0
// EPLB solve time for DeepSeek-V3: 58 MoE layers x 256 experts, 320 slots, 8 groups, 8 nodes x 8 GPUs,
// on Zipf-skewed loads with a different hot set per layer.
#include <fmt/format.h>

#include <boost/random/uniform_int_distribution.hpp>
#include <chrono>
#include <cmath>
#include <numeric>

#include "core/random_streams.hpp"
#include "policies/eplb/eplb.hpp"

using namespace epsim;

int main() {
  const int layers = 58;
  const int experts = 256;
  std::vector<double> w(static_cast<std::size_t>(layers * experts));
  core::Rng rng(1);
  std::vector<int> perm(experts);
  for (int l = 0; l < layers; ++l) {
    std::iota(perm.begin(), perm.end(), 0);
    for (int i = experts - 1; i > 0; --i) {
      std::swap(perm[static_cast<std::size_t>(i)],
                perm[static_cast<std::size_t>(boost::random::uniform_int_distribution<int>(0, i)(rng))]);
    }
    for (int r = 0; r < experts; ++r) {
      w[static_cast<std::size_t>(l * experts + perm[static_cast<std::size_t>(r)])] =
          std::floor(1e5 / std::pow(r + 1.0, 0.8));
    }
  }
  const int reps = 20;
  double checksum = 0.0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) {
    const auto r = policies::eplb::rebalance_experts(w, layers, experts, 320, 8, 8, 64);
    checksum += r.phy2log[static_cast<std::size_t>(i)];
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
  fmt::print(
      "EPLB, DeepSeek-V3 (58 x 256 experts, 320 slots, 8 groups, 8 nodes x 8 GPUs): {:.2f} ms per solve "
      "(checksum {})\n",
      s * 1e3, checksum);
  return 0;
}
