// SPDX-License-Identifier: Apache-2.0
#include "policies/grace/grace_placement.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "core/random_streams.hpp"
#include "policies/grace/affinity.hpp"

namespace epsim::policies {

namespace {

Eigen::MatrixXd sub_affinity(const Eigen::MatrixXd& a, const std::vector<int>& members) {
  const auto m = static_cast<Eigen::Index>(members.size());
  Eigen::MatrixXd s(m, m);
  for (Eigen::Index i = 0; i < m; ++i) {
    for (Eigen::Index j = 0; j < m; ++j) {
      s(i, j) = a(members[static_cast<std::size_t>(i)], members[static_cast<std::size_t>(j)]);
    }
  }
  return s;
}

}  // namespace

GraceLayerReport grace_layer(const Eigen::MatrixXd& affinity, std::span<const double> expert_load, int num_nodes,
                             int gpus_per_node, int slots_per_gpu, const GraceConfig& cfg, std::uint64_t seed) {
  const auto experts = static_cast<int>(affinity.rows());
  const core::RandomStreams streams(seed);
  KMeansOptions km;
  km.restarts = cfg.kmeans_restarts;
  km.max_iterations = cfg.kmeans_iterations;
  km.seed = streams.stream_seed("grace-kmeans", 0);

  GraceLayerReport r;
  // Node level: fully non-uniform, only the node's slots bound it (the paper has no such bound).
  const Groups nodes =
      cap_group_sizes(affinity, spectral_clustering(affinity, num_nodes, km), gpus_per_node * slots_per_gpu);
  r.node_of_expert.assign(static_cast<std::size_t>(experts), -1);
  r.gpu_of_expert.assign(static_cast<std::size_t>(experts), -1);
  std::vector<std::vector<int>> gpu_groups(static_cast<std::size_t>(num_nodes * gpus_per_node));
  for (int n = 0; n < num_nodes; ++n) {
    const std::vector<int>& members = nodes[static_cast<std::size_t>(n)];
    const Eigen::MatrixXd a = sub_affinity(affinity, members);
    km.seed = streams.stream_seed("grace-kmeans", static_cast<std::uint64_t>(n) + 1);
    // GPU level: Algorithm 2 from the node's own spectral clusters, r at the knee.
    const RatioChoice c = choose_ratio_at_knee(a, spectral_clustering(a, gpus_per_node, km), cfg.ratios, slots_per_gpu);
    r.node_ratio.push_back(c.ratio);
    for (int d = 0; d < gpus_per_node; ++d) {
      const int gpu = n * gpus_per_node + d;
      auto& g = gpu_groups[static_cast<std::size_t>(gpu)];
      for (const int local : c.groups[static_cast<std::size_t>(d)]) {
        const int e = members[static_cast<std::size_t>(local)];
        g.push_back(e);
        r.node_of_expert[static_cast<std::size_t>(e)] = n;
        r.gpu_of_expert[static_cast<std::size_t>(e)] = gpu;
      }
      std::sort(g.begin(), g.end());
    }
  }
  if (cfg.replication) {
    r.replication = plan_replication(gpu_groups, expert_load, slots_per_gpu, cfg.share);
  }
  return r;
}

LayerPlacement grace_layer_placement(const GraceLayerReport& r, int num_experts, int num_gpus, int slots_per_gpu) {
  const auto slots = static_cast<std::size_t>(num_gpus) * static_cast<std::size_t>(slots_per_gpu);
  std::vector<int> phy2log(slots, -1);
  std::vector<int> rank(slots, 0);
  std::vector<int> used(static_cast<std::size_t>(num_gpus), 0);
  const auto put = [&](int e, int g, int replica_rank) {
    const int slot = g * slots_per_gpu + used[static_cast<std::size_t>(g)]++;
    const auto s = static_cast<std::size_t>(slot);
    phy2log[s] = e;
    rank[s] = replica_rank;
  };
  for (int e = 0; e < num_experts; ++e) {  // ascending ids: each GPU's primaries in expert order
    put(e, r.gpu_of_expert[static_cast<std::size_t>(e)], 0);
  }
  std::vector<int> copies(static_cast<std::size_t>(num_experts), 0);
  for (const auto& [e, g] : r.replication.replicas) {
    put(e, g, ++copies[static_cast<std::size_t>(e)]);
  }
  return make_layer_placement(num_experts, num_gpus, slots_per_gpu, std::move(phy2log), rank);
}

Placement GracePlacement::place(const PlacementInput& in) {
  const auto layers = static_cast<std::size_t>(in.num_layers);
  const auto experts = static_cast<std::size_t>(in.num_experts);
  if (in.num_layers < 1 || in.num_experts < 1 || in.num_nodes < 1 || in.num_gpus < in.num_nodes ||
      in.num_gpus % in.num_nodes != 0 || in.slots_per_gpu < 1 ||
      static_cast<std::size_t>(in.num_gpus) * static_cast<std::size_t>(in.slots_per_gpu) < experts) {
    throw core::Error("grace placement: expected layers, experts, slots >= 1, GPUs a multiple of the nodes and " +
                      std::string("GPUs x slots >= experts, got ") + std::to_string(in.num_gpus) + " GPUs on " +
                      std::to_string(in.num_nodes) + " nodes, " + std::to_string(in.slots_per_gpu) +
                      " slots per GPU, " + std::to_string(in.num_experts) + " experts");
  }
  const Coactivation& coactivation = in.coactivation();
  const LoadWindow* window = cfg_.replication ? &in.load_window() : nullptr;
  const int gpus_per_node = in.num_gpus / in.num_nodes;
  Placement p;
  report_.clear();
  for (std::size_t l = 0; l < layers; ++l) {
    const Eigen::MatrixXd a = affinity_from_counts(coactivation.layer(static_cast<int>(l)), in.num_experts);
    const std::span<const double> load =
        window != nullptr ? window->total(static_cast<int>(l)) : std::span<const double>();
    const std::uint64_t seed = core::RandomStreams(in.seed).stream_seed("grace-layer", l);
    report_.push_back(grace_layer(a, load, in.num_nodes, gpus_per_node, in.slots_per_gpu, cfg_, seed));
    p.layers.push_back(grace_layer_placement(report_.back(), in.num_experts, in.num_gpus, in.slots_per_gpu));
  }
  return p;
}

}  // namespace epsim::policies
