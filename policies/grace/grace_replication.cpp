// SPDX-License-Identifier: Apache-2.0
#include "policies/grace/grace_replication.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "core/error.hpp"

namespace epsim::policies {

int replica_count(double rho, int num_gpus) {
  if (num_gpus < 1 || !(rho >= 0.0) || !std::isfinite(rho)) {
    throw core::Error("grace replication: expected at least one GPU and a finite skew rho >= 0, got " +
                      std::to_string(num_gpus) + " GPUs, rho " + std::to_string(rho));
  }
  const double floor_rho = std::floor(rho);
  const int n = floor_rho >= static_cast<double>(num_gpus) ? num_gpus : std::max(1, static_cast<int>(floor_rho));
  return std::min(n, num_gpus - 1);
}

std::vector<int> hot_experts(std::span<const int> group, std::span<const double> expert_load, int n_replica) {
  std::vector<int> ranked(group.begin(), group.end());
  const auto load = [&](int e) { return expert_load[static_cast<std::size_t>(e)]; };
  std::sort(ranked.begin(), ranked.end(), [&](int a, int b) {
    return load(a) > load(b) || (load(a) == load(b) && a < b);  // heaviest first, ties: lower id
  });
  const double w_max = std::accumulate(ranked.begin(), ranked.end(), 0.0, [&](double s, int e) { return s + load(e); });
  std::vector<int> hot;
  if (n_replica < 1 || w_max <= 0.0) {
    return hot;
  }
  const double threshold = w_max * n_replica / (1.0 + n_replica);
  double cumulative = 0.0;
  for (const int e : ranked) {
    if (cumulative > threshold || load(e) <= 0.0) {
      break;
    }
    hot.push_back(e);
    cumulative += load(e);
  }
  return hot;
}

double replica_share(double w_max, double w_r, int n_replica, ReplicaShare share) {
  return (share == ReplicaShare::paper ? w_max : w_r) / (n_replica + 1.0);
}

ReplicationPlan plan_replication(const std::vector<std::vector<int>>& gpu_groups, std::span<const double> expert_load,
                                 int slots_per_gpu, ReplicaShare share) {
  const auto gpus = static_cast<int>(gpu_groups.size());
  const auto experts = static_cast<int>(expert_load.size());
  ReplicationPlan p;
  p.gpu_load.assign(gpu_groups.size(), 0.0);
  std::vector<int> used(gpu_groups.size(), 0);
  for (int g = 0; g < gpus; ++g) {
    const auto& group = gpu_groups[static_cast<std::size_t>(g)];
    if (static_cast<int>(group.size()) > slots_per_gpu) {
      throw core::Error("grace replication: GPU " + std::to_string(g) + " holds " + std::to_string(group.size()) +
                        " experts, more than its " + std::to_string(slots_per_gpu) + " slots");
    }
    for (const int e : group) {
      if (e < 0 || e >= experts || !(expert_load[static_cast<std::size_t>(e)] >= 0.0)) {
        throw core::Error("grace replication: expert " + std::to_string(e) + " out of range [0, " +
                          std::to_string(experts) + ") or with a negative load");
      }
      p.gpu_load[static_cast<std::size_t>(g)] += expert_load[static_cast<std::size_t>(e)];
    }
    used[static_cast<std::size_t>(g)] = static_cast<int>(group.size());
  }
  p.predicted_load = p.gpu_load;
  const double total = std::accumulate(p.gpu_load.begin(), p.gpu_load.end(), 0.0);
  if (gpus < 2 || total <= 0.0) {
    return p;  // nothing to balance
  }
  p.heaviest_gpu = static_cast<int>(std::max_element(p.gpu_load.begin(), p.gpu_load.end()) - p.gpu_load.begin());
  const double w_max = p.gpu_load[static_cast<std::size_t>(p.heaviest_gpu)];
  p.rho = w_max / (total / gpus);
  p.n_replica = replica_count(p.rho, gpus);
  p.hot = hot_experts(gpu_groups[static_cast<std::size_t>(p.heaviest_gpu)], expert_load, p.n_replica);

  std::vector<int> order;
  for (int g = 0; g < gpus; ++g) {
    if (g != p.heaviest_gpu && used[static_cast<std::size_t>(g)] < slots_per_gpu) {
      order.push_back(g);
    }
  }
  const auto load = [&](int g) { return p.gpu_load[static_cast<std::size_t>(g)]; };
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return load(a) < load(b); });
  p.targets.assign(order.begin(), order.begin() + std::min<std::ptrdiff_t>(p.n_replica, std::ssize(order)));

  std::vector<char> copied(static_cast<std::size_t>(experts), 0);
  std::vector<char> hosts(gpu_groups.size(), 0);
  for (const int e : p.hot) {
    for (const int g : p.targets) {
      if (used[static_cast<std::size_t>(g)] >= slots_per_gpu) {
        ++p.dropped;
        continue;
      }
      ++used[static_cast<std::size_t>(g)];
      p.replicas.emplace_back(e, g);
      copied[static_cast<std::size_t>(e)] = 1;
      hosts[static_cast<std::size_t>(g)] = 1;
    }
    if (copied[static_cast<std::size_t>(e)]) {
      p.replicated_load += expert_load[static_cast<std::size_t>(e)];
    }
  }
  // Eq. 3 with the n copies actually made (fewer targets than n when slots ran out).
  if (!p.replicas.empty()) {
    const auto hosting = static_cast<int>(std::count(hosts.begin(), hosts.end(), 1));
    const double w_p = replica_share(w_max, p.replicated_load, hosting, share);
    p.predicted_load[static_cast<std::size_t>(p.heaviest_gpu)] = w_max - p.replicated_load + w_p;
    for (int g = 0; g < gpus; ++g) {
      if (hosts[static_cast<std::size_t>(g)]) {
        p.predicted_load[static_cast<std::size_t>(g)] += w_p;
      }
    }
  }
  return p;
}

}  // namespace epsim::policies
