// SPDX-License-Identifier: Apache-2.0
#include "hardware/collectives.hpp"

#include <algorithm>
#include <unordered_map>

namespace epsim::hardware {

CollectiveCoster::CollectiveCoster(const NetworkGraph& graph) : graph_(graph) {}

void CollectiveCoster::use_group(int gpu_offset, int gpus) {
  if (gpu_offset == group_offset_ && gpus == group_gpus_) {
    return;
  }
  graph_.prepare_routes(gpu_offset, gpus);
  const auto n = static_cast<std::size_t>(gpus);
  path_begin_.assign(n * n + 1, 0);
  path_arcs_.clear();
  global_arc_.clear();
  latencies_ns_.resize(n * n);
  std::unordered_map<int, int> local;
  for (int s = 0; s < gpus; ++s) {
    for (int d = 0; d < gpus; ++d) {
      const std::size_t k = static_cast<std::size_t>(s) * n + static_cast<std::size_t>(d);
      path_begin_[k] = path_arcs_.size();
      for (const int a : graph_.path(gpu_offset + s, gpu_offset + d)) {
        const auto [it, added] = local.emplace(a, static_cast<int>(global_arc_.size()));
        if (added) {
          global_arc_.push_back(a);
        }
        path_arcs_.push_back(it->second);
      }
      latencies_ns_[k] = graph_.path_latency_ns(gpu_offset + s, gpu_offset + d);
    }
  }
  path_begin_[n * n] = path_arcs_.size();
  arc_bytes_.assign(global_arc_.size(), 0.0);
  touched_.clear();
  touched_.reserve(global_arc_.size());
  group_offset_ = gpu_offset;
  group_gpus_ = gpus;
}

CollectiveCost CollectiveCoster::cost(const Eigen::MatrixXd& bytes, int gpu_offset) {
  for (const int a : touched_) {
    arc_bytes_[static_cast<std::size_t>(a)] = 0.0;
  }
  touched_.clear();
  CollectiveCost c;
  double latency = 0.0;
  const auto n = static_cast<int>(bytes.rows());
  use_group(gpu_offset, n);  // clears the workspace when the group changes
  for (int s = 0; s < n; ++s) {
    for (int d = 0; d < n; ++d) {
      const double b = bytes(s, d);
      if (s == d || b <= 0.0) {
        continue;
      }
      const int gs = gpu_offset + s;
      const int gd = gpu_offset + d;
      (graph_.node_of(gs) == graph_.node_of(gd) ? c.intra_bytes : c.inter_bytes) += b;
      const std::size_t k = static_cast<std::size_t>(s) * static_cast<std::size_t>(n) + static_cast<std::size_t>(d);
      latency = std::max(latency, latencies_ns_[k]);
      for (std::size_t p = path_begin_[k]; p < path_begin_[k + 1]; ++p) {
        const int a = path_arcs_[p];
        double& load = arc_bytes_[static_cast<std::size_t>(a)];
        if (load == 0.0) {
          touched_.push_back(a);
        }
        load += b;
      }
    }
  }
  bottleneck_ = -1;
  double busiest_ns = 0.0;
  for (const int la : touched_) {
    const int a = global_arc_[static_cast<std::size_t>(la)];
    const double t = arc_bytes_[static_cast<std::size_t>(la)] / graph_.arc(a).bw_gbps;
    if (t > busiest_ns || (t == busiest_ns && a < bottleneck_)) {
      busiest_ns = t;
      bottleneck_ = a;
    }
  }
  if (bottleneck_ >= 0) {
    c.time_ns = graph_.collective_overhead_ns() + latency + busiest_ns;
  }
  return c;
}

Eigen::MatrixXd all_gather_traffic(const Eigen::ArrayXd& bytes) {
  const auto n = static_cast<Eigen::Index>(bytes.size());
  Eigen::MatrixXd m = bytes.matrix().replicate(1, n);
  m.diagonal().setZero();
  return m;
}

Eigen::MatrixXd all_reduce_traffic(int gpus, double bytes) {
  Eigen::MatrixXd m = Eigen::MatrixXd::Constant(gpus, gpus, gpus > 1 ? 2.0 * bytes / gpus : 0.0);
  m.diagonal().setZero();
  return m;
}

}  // namespace epsim::hardware
