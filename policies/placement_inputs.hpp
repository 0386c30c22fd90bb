// SPDX-License-Identifier: Apache-2.0
#pragma once
// The typed inputs a placement policy may read besides the shape (PlacementInput): the load window,
// co-selection counts, per-origin workload and link bandwidths. Each view owns its flat row-major
// buffer and checks its sizes against the shape once, in its constructor, with an error naming the
// input; after that a policy indexes it without re-checking. Cost curves are CostCurves itself.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace epsim::policies {

/// Tokens per expert over a load window: the total [layer][expert] and, when profiled step by step,
/// the same window per step [step][layer][expert] (GEM scores every step separately).
class LoadWindow {
 public:
  /// `total` must hold layers x experts values; `per_step` none or a whole number of such matrices
  /// (their count is steps()). Throws core::Error otherwise.
  LoadWindow(int layers, int experts, std::vector<double> total, std::vector<double> per_step = {},
             std::vector<std::uint8_t> prefill_steps = {});

  int layers() const { return layers_; }
  int experts() const { return experts_; }
  /// Steps of the per-step window (0 when only the total is known).
  int steps() const { return steps_; }
  bool has_steps() const { return steps_ > 0; }

  /// The total, [layer][expert] row-major.
  const std::vector<double>& total() const { return total_; }
  /// Layer `l`'s row of the total.
  std::span<const double> total(int l) const { return std::span<const double>(total_).subspan(at(0, l, 0), cols()); }
  double total(int l, int e) const { return total_[at(0, l, e)]; }
  /// Tokens of expert `e` of layer `l` in window step `t` (t < steps()).
  double step(int t, int l, int e) const { return per_step_[at(t, l, e)]; }
  /// The per-step window, [step][layer][expert] row-major (empty when steps() is 0).
  const std::vector<double>& per_step() const { return per_step_; }
  /// Whether each step's kind is known: a prefill pass (more prompt than decode tokens, as the engine
  /// formed it) or a decode step. Known for a warm-up run's window only.
  bool has_phases() const { return !prefill_steps_.empty(); }
  bool prefills(int t) const { return prefill_steps_[static_cast<std::size_t>(t)] != 0; }

 private:
  std::size_t cols() const { return static_cast<std::size_t>(experts_); }
  std::size_t at(int t, int l, int e) const {
    return (static_cast<std::size_t>(t) * static_cast<std::size_t>(layers_) + static_cast<std::size_t>(l)) * cols() +
           static_cast<std::size_t>(e);
  }

  int layers_ = 0;
  int experts_ = 0;
  int steps_ = 0;
  std::vector<double> total_;
  std::vector<double> per_step_;
  std::vector<std::uint8_t> prefill_steps_;  // per step: 1 = a prefill pass (empty: unknown)
};

/// Counts of expert pairs, [block][expert a][expert b] row-major: what co-selection counts and cross-layer
/// transitions share.
class ExpertPairCounts {
 public:
  int layers() const { return layers_; }
  int experts() const { return experts_; }
  /// All of it, [block][expert][expert] row-major.
  const std::vector<double>& values() const { return counts_; }

 protected:
  /// `counts` must hold blocks x experts x experts values; throws core::Error naming `input`, with
  /// `blocks_shown` for the block count and `what` for the counts, otherwise.
  ExpertPairCounts(int layers, int experts, int blocks, std::vector<double> counts, std::string_view input,
                   std::string_view blocks_shown, std::string_view what);
  std::span<const double> block(int b) const {
    const std::size_t n = static_cast<std::size_t>(experts_) * static_cast<std::size_t>(experts_);
    return std::span<const double>(counts_).subspan(static_cast<std::size_t>(b) * n, n);
  }

 private:
  int layers_ = 0;
  int experts_ = 0;
  std::vector<double> counts_;
};

/// Co-selection counts over a profiling window, [layer][expert][expert]: how many tokens chose both
/// experts in their top-k (policies/grace/affinity.hpp).
class Coactivation : public ExpertPairCounts {
 public:
  /// `counts` must hold layers x experts x experts values; throws core::Error otherwise.
  Coactivation(int layers, int experts, std::vector<double> counts);
  /// Layer `l`'s experts x experts matrix, row-major.
  std::span<const double> layer(int l) const { return block(l); }
};

/// Cross-layer expert transitions over a profiling window, [layer][expert a][expert b] for layers
/// 0 .. L - 2: how many tokens chose expert a in layer l and expert b in layer l + 1 (every pair of their
/// top-k picks counts once). MoETuner's token routing dependency (moetuner_placement.hpp).
class LayerTransitions : public ExpertPairCounts {
 public:
  /// `counts` must hold (layers - 1) x experts x experts values (none for one layer); throws core::Error
  /// otherwise.
  LayerTransitions(int layers, int experts, std::vector<double> counts);
  /// Layer `l` -> `l + 1`'s experts x experts matrix, row-major (l < layers() - 1).
  std::span<const double> between(int l) const { return block(l); }
};

/// Per-origin workload W (DIRECTOR): tokens on GPU j routed to expert i, [layer][origin_gpu][expert],
/// one such tensor per kind of forward pass, with how many passes of each kind (director_model.hpp).
class OriginLoad {
 public:
  /// `load` must hold passes x layers x gpus x experts values, passes = pass_weight.size() (an empty
  /// `pass_weight`: one pass of weight 1). Throws core::Error otherwise.
  OriginLoad(int layers, int gpus, int experts, std::vector<double> load, std::vector<double> pass_weight = {});

  /// Kinds of forward pass (1 when no pass weights were given).
  int passes() const { return passes_; }
  /// W, [pass][layer][origin][expert] row-major.
  const std::vector<double>& values() const { return load_; }
  /// Passes of each kind; empty: one pass.
  const std::vector<double>& pass_weight() const { return pass_weight_; }

 private:
  int passes_ = 1;
  std::vector<double> load_;
  std::vector<double> pass_weight_;
};

/// Link bandwidths between the group's GPUs, [src][dst] in bytes per ns (= GB/s).
class LinkBandwidths {
 public:
  /// `bytes_per_ns` must hold gpus x gpus values; throws core::Error otherwise.
  LinkBandwidths(int gpus, std::vector<double> bytes_per_ns);

  int gpus() const { return gpus_; }
  double operator()(int src, int dst) const {
    return values_[static_cast<std::size_t>(src) * static_cast<std::size_t>(gpus_) + static_cast<std::size_t>(dst)];
  }
  /// All of it, [src][dst] row-major.
  const std::vector<double>& values() const { return values_; }

 private:
  int gpus_ = 0;
  std::vector<double> values_;
};

}  // namespace epsim::policies
