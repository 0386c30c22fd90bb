// SPDX-License-Identifier: Apache-2.0
#pragma once
// DIRECTOR (paper 002, Section VI-A): the latency of an expert placement for a predicted workload.
// W[l][j][i] tokens on GPU j routed to expert i of layer l; P(l, i) the GPU hosting expert i (one copy
// per expert). Per layer, computation is the straggler's C_g(lambda_g, a_g) with lambda_g the tokens of the
// experts it hosts and a_g the experts of those it expects to activate (Eq. 1-2; the paper's single
// f_comp becomes each GPU's own cost curve, which also depends on activated experts), and
// communication is the straggler origin's sum over other GPUs k of f_comm(D_jk) with D_jk = d * the
// tokens of j routed to experts on k (Eq. 3-4). f_comm(D) = D / bandwidth(j, k): the bandwidth matrix
// carries the topology (intra- vs inter-node). The objective is T_comp + T_comm over all layers (Eq. 5).
//
// Passes (not in the paper, which prices one W): the work ahead is several kinds of forward pass, e.g. a
// batch's prefill pass and its decode steps, each with its own per-pass W and a count. The objective is
// then sum over kinds of count x Eq. 5 of that W: a placement good for an average of a prefill and 60
// decode steps can be bad for the prefill, whose cost curve is in a different (compute-bound) regime.
// One kind with count 1 is the paper's model.
//
// Migration (not in the paper, whose objective ignores where experts are now): given the deployed
// placement `current`, every expert placed elsewhere adds `move_ns` to its layer's cost, the stall its
// weights' transfer is worth. It is linear in the LP's x (move_i = 1 - x[i][current(i)]), so the
// relaxation, the rounding's polish and the reconfiguration all weigh a move against what it gains.
#include <span>
#include <vector>

#include "core/grid_view.hpp"
#include "policies/cost_curves.hpp"

namespace epsim::policies {

struct DirectorProblem {
  int layers = 0;
  int experts = 0;
  int gpus = 0;
  int capacity = 0;  ///< C_max: experts per GPU and layer
  int passes = 1;    ///< kinds of forward pass
  /// W, [pass][layer][origin_gpu][expert] row-major, tokens of one pass of each kind.
  std::vector<double> workload;
  /// How many passes of each kind (empty: one of each).
  std::vector<double> pass_weight;
  /// [src_gpu][dst_gpu] bytes per ns (= GB/s); the diagonal is unused (local tokens cost nothing).
  std::vector<double> link_bytes_per_ns;
  double bytes_per_token = 0.0;  ///< d
  const CostCurves* curves = nullptr;
  /// The deployed placement, [layer][expert] -> GPU (empty: none, moves are free).
  std::vector<int> current;
  double move_ns = 0.0;  ///< cost of placing one expert away from `current`

  /// Whether moves cost anything.
  bool charges_moves() const { return move_ns > 0.0 && !current.empty(); }
  /// The GPU expert i of layer l is on now (call only when charges_moves()).
  int current_gpu(int l, int i) const {
    return current[static_cast<std::size_t>(l) * static_cast<std::size_t>(experts) + static_cast<std::size_t>(i)];
  }

  /// W as [pass][layer][origin][expert].
  core::GridView<const double, 4> w_grid() const { return core::grid(workload, passes, layers, gpus, experts); }
  double w(int l, int j, int i, int pass = 0) const { return w_grid()(pass, l, j, i); }
  double weight(int pass) const { return pass_weight.empty() ? 1.0 : pass_weight[static_cast<std::size_t>(pass)]; }
  /// ns per token sent from GPU j to GPU k (d / bandwidth); 0 for j == k.
  double ns_per_token(int j, int k) const {
    return j == k ? 0.0 : bytes_per_token / core::grid(link_bytes_per_ns, gpus, gpus)(j, k);
  }
  /// Sum over origins of W[pass][l][.][i]: the tokens expert i of layer l computes in one such pass.
  double expert_tokens(int l, int i, int pass = 0) const;
};

/// Throws core::Error naming what was expected when shapes, capacity or values are malformed.
void validate(const DirectorProblem& p);

struct DirectorCost {
  double comp_ns = 0.0;  ///< T_comp (Eq. 2)
  double comm_ns = 0.0;  ///< T_comm (Eq. 4)
  double move_ns = 0.0;  ///< migration: move_ns x experts placed away from the current placement
  double total_ns() const { return comp_ns + comm_ns + move_ns; }
};

/// Eq. 1 and 3-4's sums for pass kind q of layer l: lambda[g] = tokens GPU g computes, comm_ns[j] = link
/// time of origin j's tokens, both of size gpus and overwritten; `gpu_of[i]` hosts expert i.
void pass_loads(const DirectorProblem& p, int l, int q, std::span<const int> gpu_of, std::span<double> lambda,
                std::span<double> comm_ns);
/// The same, and active[g] = the experts GPU g is expected to activate in such a pass (the chance each
/// of its experts gets a token, activation_probability of its mean tokens), for C_g(lambda, active).
void pass_loads(const DirectorProblem& p, int l, int q, std::span<const int> gpu_of, std::span<double> lambda,
                std::span<double> comm_ns, std::span<double> active);

/// move_ns x the experts of layer l that `gpu_of` places away from the current placement (0 without one).
double migration_ns(const DirectorProblem& p, int l, std::span<const int> gpu_of);
/// Eq. 1-4 for one layer (summed over passes by their weights) and its migration; `gpu_of[i]` hosts
/// expert i.
DirectorCost director_layer_cost(const DirectorProblem& p, int l, std::span<const int> gpu_of);
/// Eq. 5's objective for an integral placement, `gpu_of[l * experts + i]`. Throws core::Error if a GPU
/// id is out of range or a GPU exceeds C_max.
DirectorCost director_cost(const DirectorProblem& p, std::span<const int> gpu_of);

/// What moving one expert costs when a re-optimisation's moves spread over the group's GPUs and run in
/// parallel: its weights over the mean link between two GPUs of the group, divided by the GPUs.
double move_ns_per_expert(const DirectorProblem& p, double expert_bytes);

/// Uniform-topology bandwidths: `intra` between GPUs of one node (gpus_per_node consecutive ids),
/// `inter` across nodes, both bytes per ns.
std::vector<double> two_level_links(int gpus, int gpus_per_node, double intra_bytes_per_ns, double inter_bytes_per_ns);

}  // namespace epsim::policies
