// SPDX-License-Identifier: Apache-2.0
#pragma once
// The fit of a cluster's communication parameters to measured collectives (nccl-tests and the like):
// the fixed cost of a collective (`collective_overhead_us`), the scale-up link's achievable share of its
// bandwidth (`intra_node.efficiency`) and its NVLink SHARP all-reduce bandwidth (`intra_node.nvls_gbps`,
// where the base has NVLS), and the scale-out link's latency and achievable share (`inter_node.latency_us`,
// `.efficiency`). The model is the run's own: the caller prices a row on a cluster exactly as a simulation
// would (`CollectivePricer`), and the fit moves only these numbers, so the fitted cluster reproduces the
// table in a run. Least squares on log(predicted / measured). A parameter the rows do not determine (no
// row's time moves with it, e.g. NVLS bandwidth under rows NCCL runs as rings, or one the rows cannot tell
// apart from the others) is held at the base's value and named with the reason; the rest are fitted.
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "calibration/fit_error.hpp"
#include "calibration/measurement_table.hpp"
#include "hardware/cluster_spec.hpp"

namespace epsim::calibration {

/// Microseconds the run's model charges for a collective row on `cluster` (its shape comes from the row).
using CollectivePricer = std::function<double(const Measurement& row, const hardware::ClusterSpec& cluster)>;

/// Whether a collective row stays inside one node (the scale-up link) or crosses nodes.
bool crosses_nodes(const Measurement& row);

struct CollectiveParam {
  std::string name;  ///< its key in the cluster preset, e.g. "inter_node.efficiency"
  double before = 0.0;
  double after = 0.0;
  double standard_error = 0.0;  ///< relative
  bool held = false;            ///< not determined by the table: kept at `before`
};

struct CollectiveFitGroup {
  std::string name;  ///< "all_reduce within a node", "all_to_all across nodes", ...
  ErrorSummary before, in_sample, held_out;
};

struct CollectiveFit {
  hardware::ClusterSpec cluster;  ///< the base with the fitted values
  std::vector<CollectiveParam> params;
  std::vector<CollectiveFitGroup> groups;
  std::vector<std::string> warnings;
};

/// Fits the collective rows of `rows` (kernel rows are ignored); throws core::Error when there are none
/// or too few for the parameters.
CollectiveFit fit_collectives(const hardware::ClusterSpec& base, std::span<const Measurement> rows,
                              const CollectivePricer& price, int folds = 5, double poorly_determined = 0.5);

}  // namespace epsim::calibration
