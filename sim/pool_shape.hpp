// SPDX-License-Identifier: Apache-2.0
#pragma once
// The geometry of one pool: consecutive EP groups of one size on consecutive GPUs. Groups are numbered
// across the pools in their order (pool_spec.hpp).
namespace epsim::serving {

struct PoolShape {
  int first_group = 0;  ///< the pool's first EP group (groups are numbered across the pools)
  int groups = 0;       ///< EP groups in the pool
  int ep_size = 0;      ///< GPUs per EP group
  int first_gpu = 0;    ///< the pool's first GPU in the cluster's numbering

  int gpus() const { return groups * ep_size; }
  bool holds(int group) const { return group >= first_group && group < first_group + groups; }
  /// The first GPU of EP group `group`, one of this pool's.
  int group_first_gpu(int group) const { return first_gpu + (group - first_group) * ep_size; }
};

}  // namespace epsim::serving
