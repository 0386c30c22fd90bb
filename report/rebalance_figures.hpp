// SPDX-License-Identifier: Apache-2.0
#pragma once
// A rebalance study's figures (rebalance.csv): the throughput and TPOT change against rebalancing off over
// the interval between rebalances, one curve per migration mode, one panel per setting of the other axes,
// and the stall's share of the run.
#include <vector>

#include "report/figure.hpp"
#include "report/report_inputs.hpp"

namespace epsim::report {

std::vector<Figure> rebalance_figures(const StudyInput& study);

}  // namespace epsim::report
