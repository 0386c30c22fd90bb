// SPDX-License-Identifier: Apache-2.0
#include "policies/director/director_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "core/error.hpp"

namespace epsim::policies {

double DirectorProblem::expert_tokens(int l, int i, int pass) const {
  double n = 0.0;
  for (int j = 0; j < gpus; ++j) {
    n += w(l, j, i, pass);
  }
  return n;
}

void validate(const DirectorProblem& p) {
  if (p.layers <= 0 || p.experts <= 0 || p.gpus <= 0) {
    throw core::Error(fmt::format("director: expected positive layers, experts and GPUs, got {}, {}, {}", p.layers,
                                  p.experts, p.gpus));
  }
  if (p.capacity <= 0 || static_cast<long long>(p.capacity) * p.gpus < p.experts) {
    throw core::Error(fmt::format("director: expected C_max * GPUs >= experts, got C_max {} x {} GPUs for {} experts",
                                  p.capacity, p.gpus, p.experts));
  }
  if (p.passes < 1 || (!p.pass_weight.empty() && p.pass_weight.size() != static_cast<std::size_t>(p.passes))) {
    throw core::Error(fmt::format("director: expected >= 1 pass kinds with one weight each, got {} and {} weights",
                                  p.passes, p.pass_weight.size()));
  }
  if (std::any_of(p.pass_weight.begin(), p.pass_weight.end(),
                  [](double v) { return !(v >= 0.0) || !std::isfinite(v); })) {
    throw core::Error("director: expected finite non-negative pass weights");
  }
  const auto cells = static_cast<std::size_t>(p.passes) * static_cast<std::size_t>(p.layers) *
                     static_cast<std::size_t>(p.gpus) * static_cast<std::size_t>(p.experts);
  if (p.workload.size() != cells) {
    throw core::Error(
        fmt::format("director: expected a workload of passes x layers x GPUs x experts = {} values, got {}", cells,
                    p.workload.size()));
  }
  if (std::any_of(p.workload.begin(), p.workload.end(), [](double v) { return !(v >= 0.0) || !std::isfinite(v); })) {
    throw core::Error("director: expected finite non-negative workload token counts");
  }
  if (!(p.move_ns >= 0.0) || !std::isfinite(p.move_ns)) {
    throw core::Error(fmt::format("director: expected a finite non-negative cost per expert moved, got {}", p.move_ns));
  }
  if (!p.current.empty()) {
    if (p.current.size() != static_cast<std::size_t>(p.layers) * static_cast<std::size_t>(p.experts)) {
      throw core::Error(fmt::format("director: expected a current placement of layers x experts = {} GPU ids, got {}",
                                    p.layers * p.experts, p.current.size()));
    }
    if (std::any_of(p.current.begin(), p.current.end(), [&](int g) { return g < 0 || g >= p.gpus; })) {
      throw core::Error(fmt::format("director: expected current GPU ids in [0, {})", p.gpus));
    }
  }
  if (p.link_bytes_per_ns.size() != static_cast<std::size_t>(p.gpus) * static_cast<std::size_t>(p.gpus)) {
    throw core::Error(fmt::format("director: expected a {}x{} link bandwidth matrix, got {} values", p.gpus, p.gpus,
                                  p.link_bytes_per_ns.size()));
  }
  for (int j = 0; j < p.gpus; ++j) {
    for (int k = 0; k < p.gpus; ++k) {
      const double bw = core::grid(p.link_bytes_per_ns, p.gpus, p.gpus)(j, k);
      if (j != k && !(bw > 0.0 && std::isfinite(bw))) {
        throw core::Error(
            fmt::format("director: expected a positive bandwidth from GPU {} to GPU {}, got {}", j, k, bw));
      }
    }
  }
  if (!(p.bytes_per_token >= 0.0)) {
    throw core::Error(fmt::format("director: expected bytes per token >= 0, got {}", p.bytes_per_token));
  }
  if (p.curves == nullptr || p.curves->num_gpus() != p.gpus) {
    throw core::Error(fmt::format("director: expected cost curves for {} GPUs", p.gpus));
  }
}

namespace {

// One pass's loads; with `active`, also each GPU's expected activated experts. The same sums in the same
// order as summing W per GPU, per origin and per expert separately, so every value is bit for bit theirs.
void pass_loads_into(const DirectorProblem& p, int l, int q, std::span<const int> gpu_of, std::span<double> lambda,
                     std::span<double> comm_ns, double* active) {
  std::fill(lambda.begin(), lambda.end(), 0.0);
  std::fill(comm_ns.begin(), comm_ns.end(), 0.0);
  if (active != nullptr) {
    std::fill(active, active + p.gpus, 0.0);
  }
  // ns_per_token's quotients once per call (G^2 divisions, not experts x G): the bound keeps G <= 32.
  constexpr int k_table_gpus = 32;
  std::array<double, static_cast<std::size_t>(k_table_gpus) * k_table_gpus> table;
  const bool tabled = p.gpus <= k_table_gpus;
  const auto G = static_cast<std::size_t>(p.gpus);
  if (tabled) {
    for (int j = 0; j < p.gpus; ++j) {
      for (int k = 0; k < p.gpus; ++k) {
        table[static_cast<std::size_t>(j) * G + static_cast<std::size_t>(k)] = p.ns_per_token(j, k);
      }
    }
  }
  for (int i = 0; i < p.experts; ++i) {
    const int k = gpu_of[static_cast<std::size_t>(i)];
    double n = 0.0;  // expert_tokens(l, i, q), summed as it sums
    for (int j = 0; j < p.gpus; ++j) {
      const double w = p.w(l, j, i, q);
      lambda[static_cast<std::size_t>(k)] += w;
      comm_ns[static_cast<std::size_t>(j)] +=
          w * (tabled ? table[static_cast<std::size_t>(j) * G + static_cast<std::size_t>(k)] : p.ns_per_token(j, k));
      n += w;
    }
    if (active != nullptr) {
      active[k] += activation_probability(n);
    }
  }
}

}  // namespace

void pass_loads(const DirectorProblem& p, int l, int q, std::span<const int> gpu_of, std::span<double> lambda,
                std::span<double> comm_ns, std::span<double> active) {
  pass_loads_into(p, l, q, gpu_of, lambda, comm_ns, active.data());
}

void pass_loads(const DirectorProblem& p, int l, int q, std::span<const int> gpu_of, std::span<double> lambda,
                std::span<double> comm_ns) {
  pass_loads_into(p, l, q, gpu_of, lambda, comm_ns, nullptr);
}

double migration_ns(const DirectorProblem& p, int l, std::span<const int> gpu_of) {
  if (!p.charges_moves()) {
    return 0.0;
  }
  int moved = 0;
  for (int i = 0; i < p.experts; ++i) {
    moved += gpu_of[static_cast<std::size_t>(i)] != p.current_gpu(l, i) ? 1 : 0;
  }
  return p.move_ns * moved;
}

double move_ns_per_expert(const DirectorProblem& p, double expert_bytes) {
  if (p.gpus < 2 || !(expert_bytes > 0.0)) {
    return 0.0;
  }
  double sum = 0.0;
  const auto links = core::grid(p.link_bytes_per_ns, p.gpus, p.gpus);
  for (int j = 0; j < p.gpus; ++j) {
    for (int k = 0; k < p.gpus; ++k) {
      sum += j == k ? 0.0 : links(j, k);
    }
  }
  const double mean_bytes_per_ns = sum / (static_cast<double>(p.gpus) * (p.gpus - 1));
  return mean_bytes_per_ns > 0.0 ? expert_bytes / mean_bytes_per_ns / p.gpus : 0.0;
}

DirectorCost director_layer_cost(const DirectorProblem& p, int l, std::span<const int> gpu_of) {
  std::vector<double> lambda(static_cast<std::size_t>(p.gpus));
  std::vector<double> comm_ns(static_cast<std::size_t>(p.gpus));
  std::vector<double> active(static_cast<std::size_t>(p.gpus));
  DirectorCost c;
  for (int q = 0; q < p.passes; ++q) {
    pass_loads(p, l, q, gpu_of, lambda, comm_ns, active);
    double comp = 0.0;
    double comm = 0.0;
    for (int g = 0; g < p.gpus; ++g) {
      const auto gi = static_cast<std::size_t>(g);
      comp = std::max(comp, p.curves->ns(g, lambda[gi], active[gi]));
      comm = std::max(comm, comm_ns[static_cast<std::size_t>(g)]);
    }
    c.comp_ns += p.weight(q) * comp;
    c.comm_ns += p.weight(q) * comm;
  }
  c.move_ns = migration_ns(p, l, gpu_of);
  return c;
}

DirectorCost director_cost(const DirectorProblem& p, std::span<const int> gpu_of) {
  if (gpu_of.size() != static_cast<std::size_t>(p.layers) * static_cast<std::size_t>(p.experts)) {
    throw core::Error(fmt::format("director: expected a placement of layers x experts = {} GPU ids, got {}",
                                  p.layers * p.experts, gpu_of.size()));
  }
  DirectorCost total;
  std::vector<int> used(static_cast<std::size_t>(p.gpus));
  for (int l = 0; l < p.layers; ++l) {
    const auto row = gpu_of.subspan(static_cast<std::size_t>(l) * static_cast<std::size_t>(p.experts),
                                    static_cast<std::size_t>(p.experts));
    std::fill(used.begin(), used.end(), 0);
    for (const int g : row) {
      if (g < 0 || g >= p.gpus) {
        throw core::Error(fmt::format("director: expected GPU ids in [0, {}), got {}", p.gpus, g));
      }
      if (++used[static_cast<std::size_t>(g)] > p.capacity) {
        throw core::Error(
            fmt::format("director: layer {} puts more than C_max = {} experts on GPU {}", l, p.capacity, g));
      }
    }
    const DirectorCost c = director_layer_cost(p, l, row);
    total.comp_ns += c.comp_ns;
    total.comm_ns += c.comm_ns;
    total.move_ns += c.move_ns;
  }
  return total;
}

std::vector<double> two_level_links(int gpus, int gpus_per_node, double intra_bytes_per_ns, double inter_bytes_per_ns) {
  if (gpus <= 0 || gpus_per_node <= 0 || !(intra_bytes_per_ns > 0.0) || !(inter_bytes_per_ns > 0.0)) {
    throw core::Error("director: expected positive GPU counts and bandwidths for the link matrix");
  }
  std::vector<double> bw(static_cast<std::size_t>(gpus) * static_cast<std::size_t>(gpus));
  for (int j = 0; j < gpus; ++j) {
    for (int k = 0; k < gpus; ++k) {
      bw[static_cast<std::size_t>(j) * static_cast<std::size_t>(gpus) + static_cast<std::size_t>(k)] =
          j / gpus_per_node == k / gpus_per_node ? intra_bytes_per_ns : inter_bytes_per_ns;
    }
  }
  return bw;
}

}  // namespace epsim::policies
