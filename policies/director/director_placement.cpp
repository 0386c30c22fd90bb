// SPDX-License-Identifier: Apache-2.0
#include "policies/director/director_placement.hpp"

#include <fmt/format.h>

#include <array>
#include <string_view>

#include "core/error.hpp"
#include "core/grid_view.hpp"
#include "core/random_streams.hpp"

namespace epsim::policies {

namespace {

// The window's steps as the online modes price work: prefill passes and decode steps as two kinds (one
// when the window holds one), each W the kind's mean per step, counted by its steps; every GPU holds 1/G
// of each expert's tokens. A window whose step kinds are unknown (a trace's, a synthetic one) is one kind.
void pass_kinds_from_window(const LoadWindow& win, std::size_t gpus, DirectorProblem& p) {
  const auto L = static_cast<std::size_t>(p.layers);
  const auto E = static_cast<std::size_t>(p.experts);
  const int steps = win.steps();
  std::array<double, 2> count{0.0, 0.0};  // prefill passes, decode steps
  std::vector<int> kind(static_cast<std::size_t>(steps), 1);
  for (int t = 0; t < steps; ++t) {
    kind[static_cast<std::size_t>(t)] = win.has_phases() && win.prefills(t) ? 0 : 1;
    count[static_cast<std::size_t>(kind[static_cast<std::size_t>(t)])] += 1.0;
  }
  std::array<int, 2> index{0, 0};  // kind -> pass index of the problem
  p.pass_weight.clear();
  for (int k = 0; k < 2; ++k) {
    if (count[static_cast<std::size_t>(k)] > 0.0) {
      index[static_cast<std::size_t>(k)] = static_cast<int>(p.pass_weight.size());
      p.pass_weight.push_back(count[static_cast<std::size_t>(k)]);
    }
  }
  p.passes = static_cast<int>(p.pass_weight.size());
  p.workload.assign(static_cast<std::size_t>(p.passes) * L * gpus * E, 0.0);
  const auto w = core::grid(p.workload, static_cast<std::size_t>(p.passes), L, gpus, E);
  for (int t = 0; t < steps; ++t) {
    const auto k = static_cast<std::size_t>(kind[static_cast<std::size_t>(t)]);
    const auto q = static_cast<std::size_t>(index[k]);
    const double scale = 1.0 / (count[k] * static_cast<double>(gpus));
    for (std::size_t l = 0; l < L; ++l) {
      for (std::size_t i = 0; i < E; ++i) {
        const double tokens = win.step(t, static_cast<int>(l), static_cast<int>(i)) * scale;
        for (std::size_t j = 0; j < gpus; ++j) {
          w(q, l, j, i) += tokens;
        }
      }
    }
  }
}

}  // namespace

DirectorProblem director_problem(const PlacementInput& in, const DirectorOptions& opt) {
  DirectorProblem p;
  p.layers = in.num_layers;
  p.experts = in.num_experts;
  p.gpus = in.num_gpus;
  p.capacity = in.slots_per_gpu;
  p.bytes_per_token = in.token_bytes > 0.0 ? in.token_bytes : opt.bytes_per_token;
  p.curves = &in.cost_curves();
  const auto L = static_cast<std::size_t>(in.num_layers);
  const auto E = static_cast<std::size_t>(in.num_experts);
  const auto G = static_cast<std::size_t>(std::max(in.num_gpus, 0));
  if (in.has_origin_load()) {
    const OriginLoad& origin = in.origin_load();
    if (!origin.pass_weight().empty()) {
      p.passes = origin.passes();
      p.pass_weight = origin.pass_weight();
    }
    p.workload = origin.values();
  } else if (G > 0 && opt.window == DirectorWindow::pass_kinds && in.load_window().has_steps()) {
    pass_kinds_from_window(in.load_window(), G, p);
  } else if (G > 0) {
    // No origins known: every GPU holds 1/G of each expert's tokens (uniform data parallel attention).
    p.workload.assign(L * G * E, 0.0);
    const auto w = core::grid(p.workload, L, G, E);
    const auto load = core::grid(in.load_window().total(), L, E);
    for (std::size_t l = 0; l < L; ++l) {
      for (std::size_t j = 0; j < G; ++j) {
        for (std::size_t i = 0; i < E; ++i) {
          w(l, j, i) = load(l, i) / static_cast<double>(G);
        }
      }
    }
  } else {
    throw core::Error(fmt::format("director: expected GPUs in the EP group, got {}", in.num_gpus));
  }
  if (in.has_link_bandwidths()) {
    p.link_bytes_per_ns = in.link_bandwidths().values();
  } else {
    const int nodes = std::max(in.num_nodes, 1);
    if (in.num_gpus % nodes != 0) {
      throw core::Error(fmt::format("director: expected GPUs ({}) to divide over nodes ({})", in.num_gpus, nodes));
    }
    p.link_bytes_per_ns = two_level_links(in.num_gpus, in.num_gpus / nodes, opt.intra_node_gbps, opt.inter_node_gbps);
  }
  validate(p);
  return p;
}

std::vector<double> sum_workloads(std::span<const std::vector<double>> batches) {
  std::vector<double> total;
  for (const std::vector<double>& b : batches) {
    if (total.empty()) {
      total.assign(b.size(), 0.0);
    }
    if (b.size() != total.size()) {
      throw core::Error(
          fmt::format("director: expected workload matrices of {} values, got {}", total.size(), b.size()));
    }
    for (std::size_t k = 0; k < b.size(); ++k) {
      total[k] += b[k];
    }
  }
  return total;
}

Placement DirectorPlacement::place(const PlacementInput& in) {
  if (in.num_gpus > k_director_max_ep_size) {
    throw core::Error(
        fmt::format("director: an EP group of {} GPUs is over its bound of {} (the optimisation "
                    "grows ~4-10x per doubling of GPUs; docs/policies.md, Bounds)",
                    in.num_gpus, k_director_max_ep_size));
  }
  const DirectorProblem p = director_problem(in, opt_);
  return placement_from_gpu_of(p, solve(p, in.seed));
}

std::vector<int> DirectorPlacement::solve(const DirectorProblem& p, std::uint64_t seed) {
  const DirectorLpResult lp = solve_director_lp(p, opt_.lp);
  core::Rng rng(seed);
  DirectorRoundingResult r = round_director(p, lp, opt_.rounding, rng);
  report_ = DirectorReport{lp.bound_ns, r.cost.total_ns(), r.gap, lp.lp_solves};
  return std::move(r.gpu_of);
}

Placement placement_from_gpu_of(const DirectorProblem& p, std::span<const int> gpu_of) {
  Placement out;
  const auto E = static_cast<std::size_t>(p.experts);
  for (int l = 0; l < p.layers; ++l) {
    std::vector<int> phy2log(static_cast<std::size_t>(p.gpus) * static_cast<std::size_t>(p.capacity), -1);
    std::vector<int> used(static_cast<std::size_t>(p.gpus), 0);
    for (std::size_t i = 0; i < E; ++i) {
      const int g = gpu_of[static_cast<std::size_t>(l) * E + i];
      phy2log[static_cast<std::size_t>(g) * static_cast<std::size_t>(p.capacity) +
              static_cast<std::size_t>(used[static_cast<std::size_t>(g)]++)] = static_cast<int>(i);
    }
    out.layers.push_back(make_layer_placement(p.experts, p.gpus, p.capacity, std::move(phy2log)));
  }
  return out;
}

DirectorOptions parse_director_options(core::ParamTable& t, DirectorLpOptions::Mode default_lp_mode) {
  static constexpr std::array<core::Choice<DirectorLpOptions::Mode>, 2> k_modes{
      {{"bisect", DirectorLpOptions::Mode::bisect}, {"direct", DirectorLpOptions::Mode::direct}}};
  DirectorOptions o;
  o.lp.mode = t.choice<DirectorLpOptions::Mode>(
      "lp_mode", default_lp_mode,
      "bisect = the paper's binary search on the budget over feasibility LPs; direct = "
      "one LP minimising the latency (same optimum)",
      k_modes);
  o.lp.epsilon = t.real("epsilon", 1e-4, "binary search stops at (high - low) <= epsilon * high", {1e-12, 0.5});
  o.lp.curve_points = static_cast<int>(
      t.integer("curve_points", 32, "samples of an exact cost curve before its convex hull", {2, 100000}));
  o.rounding.trials =
      static_cast<int>(t.integer("trials", 4, "independent rounding walks; the best is kept", {1, 10000}));
  o.rounding.polish = t.boolean("polish", true, "improving moves and swaps after rounding (not in the paper)");
  o.rounding.polish_passes =
      static_cast<int>(t.integer("polish_passes", 4, "sweeps of the polish at most", {0, 10000}));
  o.bytes_per_token = t.real("bytes_per_token", 4096.0, "d: bytes of one token's hidden state", {0.0, 1e9});
  o.intra_node_gbps =
      t.real("intra_node_gbps", 400.0, "GB/s between GPUs of a node when the input gives no links", {1e-6, 1e9});
  o.inter_node_gbps = t.real("inter_node_gbps", 50.0, "GB/s across nodes when the input gives no links", {1e-6, 1e9});
  return o;
}

}  // namespace epsim::policies
