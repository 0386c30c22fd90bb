#pragma once
// The EP groups of a cluster as pools: one pool of equal groups when prefill and decode are co-located,
// or a prefill pool and a decode pool, each with its own EP size (SGLang's and DeepSeek's deployments
// prefill at EP32 and decode at EP72 or EP144). Per-pool settings hang off the pool.
namespace epsim::serving {

/// One pool: `groups` consecutive EP groups of `ep_size` GPUs each, on consecutive GPUs.
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

/// A cluster's pools: the prefill pool's groups first (from GPU 0), the decode pool on the rest.
struct PoolLayout {
  PoolShape prefill;  ///< no groups when co-located
  PoolShape decode;   ///< every group when co-located

  int groups() const { return prefill.groups + decode.groups; }
  int gpus() const { return prefill.gpus() + decode.gpus(); }
  const PoolShape& of_group(int group) const { return prefill.holds(group) ? prefill : decode; }
  /// Whether every EP group has the same size (co-located, or both pools alike).
  bool uniform() const { return prefill.groups == 0 || prefill.ep_size == decode.ep_size; }
  /// The largest EP group's GPUs.
  int max_ep_size() const {
    return prefill.groups > 0 && prefill.ep_size > decode.ep_size ? prefill.ep_size : decode.ep_size;
  }
};

/// The pools of a cluster of `gpus` GPUs: `prefill_groups` groups of `prefill_ep_size` GPUs (0 = `ep_size`)
/// prefill, the remaining GPUs decode in groups of `ep_size` (every group when `prefill_groups` = 0).
/// Throws core::Error naming the sizes when they do not tile the cluster or leave no decode group.
PoolLayout pool_layout(int gpus, int ep_size, int prefill_groups, int prefill_ep_size);

}  // namespace epsim::serving
