// SPDX-License-Identifier: Apache-2.0
#pragma once
// DIRECTOR (paper 002) as a placement policy: the LP relaxation of Eq. 5 (director_lp.hpp), binary
// search on the latency budget, randomised iterative rounding (director_rounding.hpp). One copy per
// expert, at most slots_per_gpu (C_max) experts per GPU and layer; the GPU's experts fill its first
// slots in ascending order, the rest stay empty.
//
// W comes from PlacementInput::origin_load() when given, else the load window spread evenly over the GPUs.
// The paper's three strategies are this one optimiser fed different W:
//  - online proactive (DIRECTOR): W predicted for the queued requests (routing_predictor.hpp);
//  - online reactive: W observed in the previous batch;
//  - offline static: W summed over a historical trace (sum_workloads), optimised once and kept.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/params.hpp"
#include "policies/director/director_lp.hpp"
#include "policies/director/director_model.hpp"
#include "policies/director/director_rounding.hpp"
#include "policies/placement_policy.hpp"

namespace epsim::policies {

/// How the offline placement reads its load window (with no per-origin load given).
enum class DirectorWindow : std::uint8_t {
  sum,         ///< the paper's: one W, the window's summed loads (sum_workloads of a historical trace)
  pass_kinds,  ///< as the online modes price: the window's prefill passes and decode steps as two kinds,
               ///< each W its mean per pass, counted by its steps
};

struct DirectorOptions {
  DirectorLpOptions lp;
  DirectorRoundingOptions rounding;
  double bytes_per_token = 4096.0;  ///< d: a BF16 hidden state of 2048 (DeepSeek-V2-Lite)
  double intra_node_gbps = 400.0;   ///< link bandwidth within a node when the input gives none (GB/s)
  double inter_node_gbps = 50.0;    ///< across nodes (GB/s)
  DirectorWindow window = DirectorWindow::sum;
};

/// The largest EP group DIRECTOR optimises in about a minute of one core: its time grows ~4-10x per
/// doubling of GPUs (the LP's E x G variables, the polish's moves); DeepSeek-V3 at EP32 takes ~30 s
/// (docs/policies.md, Bounds). The placement and the online trigger both refuse larger groups.
inline constexpr int k_director_max_ep_size = 32;

/// The DirectorProblem of a placement input (W, links and C_max = slots_per_gpu). Throws core::Error when
/// neither the origin load nor the load window is given or the curves are missing (the input's accessors).
DirectorProblem director_problem(const PlacementInput& in, const DirectorOptions& opt);

/// Reads the optimiser's options (lp_mode, epsilon, curve_points, trials, polish, polish_passes,
/// bytes_per_token, intra_node_gbps, inter_node_gbps) from `t`; the caller finishes the table.
DirectorOptions parse_director_options(core::ParamTable& t,
                                       DirectorLpOptions::Mode default_lp_mode = DirectorLpOptions::Mode::bisect);

/// The placement of `gpu_of` ([layer][expert] -> GPU, one copy each, within C_max): each GPU's experts
/// fill its first slots in ascending order.
Placement placement_from_gpu_of(const DirectorProblem& p, std::span<const int> gpu_of);

/// Element-wise sum of per-batch workload matrices of one shape: the offline baseline's historical W.
std::vector<double> sum_workloads(std::span<const std::vector<double>> batches);

struct DirectorReport {
  double lp_bound_ns = 0.0;
  double rounded_ns = 0.0;  ///< Eq. 5 of the returned placement
  double gap = 0.0;         ///< rounded_ns / lp_bound_ns
  int lp_solves = 0;
};

class DirectorPlacement final : public PlacementPolicy {
 public:
  explicit DirectorPlacement(const DirectorOptions& opt) : opt_(opt) {}
  Placement place(const PlacementInput& in) override;
  /// The optimiser alone on a built problem: LP, rounding, polish; returns [layer][expert] -> GPU.
  std::vector<int> solve(const DirectorProblem& p, std::uint64_t seed);
  const DirectorOptions& options() const { return opt_; }
  PolicyNeeds needs() const override { return {.load_window = true, .cost_curves = true}; }
  int max_ep_size() const override { return k_director_max_ep_size; }
  /// The last place()'s LP bound and rounding gap.
  const DirectorReport& last_report() const { return report_; }

 private:
  DirectorOptions opt_;
  DirectorReport report_;
};

}  // namespace epsim::policies
