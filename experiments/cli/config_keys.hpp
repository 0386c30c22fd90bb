// SPDX-License-Identifier: Apache-2.0
#pragma once
// Every key of an experiment config with its type, range, default and description, taken from the
// section readers themselves run in documentation mode: what `epsim list keys` prints and what
// docs/configuration.md's generated tables hold, so neither can drift from the code.
#include <ostream>
#include <string>
#include <vector>

#include "core/params.hpp"

namespace epsim::experiments {

/// Every config key, in the order the loader reads the sections. Registered policies' own options are
/// listed under the table that holds them (policy.placement_options.KEY, policy.routing_options.KEY,
/// policy.rebalance.KEY), once per policy, their description starting "(placement gem) " etc.
std::vector<core::ParamDoc> document_config();

/// The sections of `docs`: every dotted prefix of a key ("cluster", "cluster.intra_node"), in order.
std::vector<std::string> config_sections(const std::vector<core::ParamDoc>& docs);

/// The docs of the keys inside `section` ("" = all) but outside every section of `except` (subsections
/// documented on their own); a UsageError naming the valid sections for a section no key is in.
std::vector<core::ParamDoc> section_keys(const std::vector<core::ParamDoc>& docs, const std::string& section,
                                         const std::vector<std::string>& except = {});

/// One key as every listing prints it: "KEY (TYPE RANGE; default D): DESCRIPTION" ("required" for a
/// key without a default).
std::string key_line(const core::ParamDoc& doc);

/// A markdown table of `docs` (| key | type | range | default | meaning |), keys relative to `section`.
void print_keys_markdown(const std::vector<core::ParamDoc>& docs, const std::string& section, std::ostream& out);

}  // namespace epsim::experiments
