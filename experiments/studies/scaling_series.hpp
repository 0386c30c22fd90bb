// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which points of a what-if one scaling curve joins. A curve against GPUs joins only points of one
// system family (the cluster preset with its GPU and fabric: H200 nodes over InfiniBand and a GB200
// NVL72 rack are two curves) at one offered load, and equal levels of every axis that leaves the setup
// alone (a policy axis: a curve per policy). The load is the arrival rate, or the rate per GPU when the
// study scales its load with its GPUs (fewer distinct per-GPU rates than rates, as when a rate axis is
// zipped with the setups). A point alone on its curve is drawn as a point.
#include <string>
#include <vector>

#include "experiments/studies/study_plan.hpp"

namespace epsim::experiments {

struct ScalingSeries {
  std::string system;  ///< "hgx-h200", or with its GPU and fabric where one preset name covers several
  std::string series;  ///< the curve's label: system, load, other axes' levels
};

/// One entry per point of `plan`, in point order.
std::vector<ScalingSeries> scaling_series(const StudySpec& spec, const StudyPlan& plan);

}  // namespace epsim::experiments
