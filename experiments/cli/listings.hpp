// SPDX-License-Identifier: Apache-2.0
#pragma once
// What `epsim list` prints: the shipped model, GPU, cluster and link presets, the policy registries
// with their parameters, and every config key (`epsim list keys`).
#include <ostream>
#include <string>
#include <vector>

namespace epsim::experiments {

/// Prints the listing `what` (models, gpus, clusters, links, policies) or all of them ("all"), in that
/// order; false when `what` names none.
bool print_listing(const std::string& what, std::ostream& out);

/// `epsim list models --from-hf FILE`: the [model] table read from a Hugging Face config.json (TOML,
/// loadable as a [model] section) and the fields it ignored; `accepted` as [model] hf_ignore.
void print_hf_model(const std::string& file, const std::vector<std::string>& accepted, std::ostream& out);

/// `epsim list keys [SECTION]`: every config key (inside SECTION, e.g. "scheduler" or
/// "policy.rebalance", less the subsections of `except`), one a line or (`markdown`) as
/// docs/configuration.md's tables; a UsageError naming the valid sections for an unknown one. Not part
/// of "all", which lists presets and policies.
void print_config_keys(const std::string& section, const std::vector<std::string>& except, bool markdown,
                       std::ostream& out);

}  // namespace epsim::experiments
