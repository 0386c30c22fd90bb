// SPDX-License-Identifier: Apache-2.0
#include "experiments/cli/version_text.hpp"

#include <fmt/format.h>

#include "epsim_commit.hpp"
#include "version.hpp"

namespace epsim::experiments {

std::string version_text() {
  return fmt::format("epsim {} (commit {})\n", k_version, k_commit);
}

}  // namespace epsim::experiments
