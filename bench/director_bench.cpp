// SPDX-License-Identifier: Apache-2.0
// DIRECTOR optimisation time per reconfiguration (issue 8): LP relaxation (binary search on the budget,
// Clp) + randomised rounding + polish, for a DeepSeek-V2-Lite-shaped problem (26 MoE layers, 64 experts,
// top-6) on 4 GPUs of one node and a Qwen3-30B-A3B-shaped one (48 layers, 128 experts, top-8) on 32 GPUs
// (4 nodes x 8). W: 4096 queued tokens spread over the GPUs, Zipf(1.0) expert popularity reshuffled per
// layer; cost curves: 8 us launch + 12 ns per token, GPU speeds +-5 %; links 400 GB/s in a node, 50 GB/s
// across; d = hidden size x 2 bytes. "2 kinds": the online trigger's problem, a 4096-token prefill pass
// plus 60 decode passes of 64 tokens (the same popularity); then the reconfiguration from a linear
// placement (relabelling, polish of the current layer, min_gain 0.02).
#include <fmt/format.h>

#include <algorithm>
#include <boost/random/uniform_int_distribution.hpp>
#include <boost/random/uniform_real_distribution.hpp>
#include <chrono>
#include <numeric>
#include <string_view>

#include "core/random_streams.hpp"
#include "policies/director/director_lp.hpp"
#include "policies/director/director_model.hpp"
#include "policies/director/director_reconfigure.hpp"
#include "policies/director/director_rounding.hpp"

using namespace epsim;
using namespace epsim::policies;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void bench(const char* label, int layers, int experts, int top_k, int gpus, int gpus_per_node, double hidden,
           const char* mode_name, bool two_kinds) {
  const DirectorLpOptions::Mode mode =
      std::string_view(mode_name) == "direct" ? DirectorLpOptions::Mode::direct : DirectorLpOptions::Mode::bisect;
  core::Rng rng(42);
  boost::random::uniform_real_distribution<double> speed(0.95, 1.05);
  std::vector<std::vector<double>> n(static_cast<std::size_t>(gpus));
  std::vector<std::vector<double>> ns(static_cast<std::size_t>(gpus));
  for (int g = 0; g < gpus; ++g) {
    const double s = speed(rng);
    for (const double t : {1.0, 256.0, 1024.0, 4096.0, 32768.0}) {
      n[static_cast<std::size_t>(g)].push_back(t);
      ns[static_cast<std::size_t>(g)].push_back((8000.0 + 12.0 * t) / s);
    }
  }
  const CostCurves curves(std::move(n), std::move(ns));
  DirectorProblem p;
  p.layers = layers;
  p.experts = experts;
  p.gpus = gpus;
  p.capacity = experts / gpus;
  p.curves = &curves;
  p.bytes_per_token = hidden * 2.0;
  p.link_bytes_per_ns = two_level_links(gpus, gpus_per_node, 400.0, 50.0);
  std::vector<double> zipf(static_cast<std::size_t>(experts));
  for (int e = 0; e < experts; ++e) {
    zipf[static_cast<std::size_t>(e)] = 1.0 / (e + 1);
  }
  const double zsum = std::accumulate(zipf.begin(), zipf.end(), 0.0);
  boost::random::uniform_real_distribution<double> jitter(0.5, 1.5);
  std::vector<int> perm(static_cast<std::size_t>(layers * experts));
  for (int l = 0; l < layers; ++l) {
    const auto first = perm.begin() + static_cast<std::ptrdiff_t>(l * experts);
    std::iota(first, first + experts, 0);
    for (int e = experts - 1; e > 0; --e) {
      boost::random::uniform_int_distribution<int> pick(0, e);
      std::swap(first[e], first[pick(rng)]);
    }
  }
  // One pass kind's W for `tokens` queued tokens, appended to the problem's.
  const auto add_kind = [&](int tokens) {
    const std::size_t at = p.workload.size();
    p.workload.resize(at + static_cast<std::size_t>(layers * gpus * experts), 0.0);
    for (int l = 0; l < layers; ++l) {
      for (int j = 0; j < gpus; ++j) {
        for (int e = 0; e < experts; ++e) {
          const double mean = static_cast<double>(tokens) / gpus * top_k * zipf[static_cast<std::size_t>(e)] / zsum;
          p.workload[at + static_cast<std::size_t>((l * gpus + j) * experts +
                                                   perm[static_cast<std::size_t>(l * experts + e)])] =
              std::round(mean * jitter(rng));
        }
      }
    }
  };
  add_kind(4096);
  if (two_kinds) {
    add_kind(64);
    p.passes = 2;
    p.pass_weight = {1.0, 60.0};
  }
  auto t0 = std::chrono::steady_clock::now();
  const DirectorLpResult lp = solve_director_lp(p, {.mode = mode, .epsilon = 1e-4});
  const double lp_s = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  const DirectorRoundingResult r = round_director(p, lp, {.trials = 4, .polish = false}, rng);
  const double round_s = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  const DirectorRoundingResult rp = round_director(p, lp, {.trials = 4, .polish = true}, rng);
  const double polish_s = seconds_since(t0);
  std::vector<int> rr(static_cast<std::size_t>(layers * experts));
  for (std::size_t k = 0; k < rr.size(); ++k) {
    rr[k] = static_cast<int>((k % static_cast<std::size_t>(experts)) / static_cast<std::size_t>(p.capacity));
  }
  const double linear_ns = director_cost(p, rr).total_ns();
  t0 = std::chrono::steady_clock::now();
  const ReconfigureResult rc = reconfigure(p, rr, rp.gpu_of, 0.02);
  const double reconf_s = seconds_since(t0);
  fmt::print(
      "{:<34} {:<7} {:<6} LP {:7.2f} s ({} solves)  rounding {:6.3f} s  rounding+polish {:6.3f} s  "
      "reconfigure {:6.3f} s | bound {:9.0f} ns  rounded gap {:.4f}  polished gap {:.4f}  linear {:.4f}x bound  "
      "moves {} of {} ({:.4f}x bound)\n",
      label, two_kinds ? "2 kinds" : "1 kind", mode_name, lp_s, lp.lp_solves, round_s, polish_s, reconf_s, lp.bound_ns,
      r.gap, rp.gap, linear_ns / lp.bound_ns, rc.experts_moved, layers * experts,
      director_cost(p, rc.gpu_of).total_ns() / lp.bound_ns);
}

}  // namespace

int main() {
  for (const bool two : {false, true}) {
    for (const char* mode : {"direct", "bisect"}) {
      bench("DeepSeek-V2-Lite 26x64 top-6, 4 GPUs", 26, 64, 6, 4, 4, 2048.0, mode, two);
    }
  }
  // Bisect on 32 GPUs takes minutes per run (one kind: ~200 s); two kinds are timed with direct only.
  bench("Qwen3-30B-A3B 48x128 top-8, 32 GPUs", 48, 128, 8, 32, 8, 2048.0, "direct", false);
  bench("Qwen3-30B-A3B 48x128 top-8, 32 GPUs", 48, 128, 8, 32, 8, 2048.0, "bisect", false);
  bench("Qwen3-30B-A3B 48x128 top-8, 32 GPUs", 48, 128, 8, 32, 8, 2048.0, "direct", true);
  return 0;
}
