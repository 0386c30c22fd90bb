#pragma once
// What `epsim list` prints: the shipped model, GPU, cluster and link presets and the policy registries
// with their parameters.
#include <ostream>
#include <string>

namespace epsim::experiments {

/// Prints the listing `what` (models, gpus, clusters, links, policies) or all of them ("all"), in that
/// order; false when `what` names none.
bool print_listing(const std::string& what, std::ostream& out);

}  // namespace epsim::experiments
