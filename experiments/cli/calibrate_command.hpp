// SPDX-License-Identifier: Apache-2.0
#pragma once
// `epsim calibrate`: measured GPU profiles in, calibrated presets and error reports out.
//   calibrate import FORMAT FILE... --out TABLE   what profilers write -> the measurement table
//   calibrate fit TABLE --gpu G --out G.toml      fit the roofline (and, given collectives, the cluster's
//                                                 communication) to the table; print the fit report
//   calibrate check TABLE [--config X]            price every row with the current model; errors per
//                                                 op and regime; --out adds predicted_us to the table
// Usage errors are std::invalid_argument naming the option.
#include <iosfwd>
#include <string>
#include <vector>

namespace epsim::experiments {

/// `args`: what follows `calibrate` on the command line.
int calibrate_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace epsim::experiments
