// SPDX-License-Identifier: Apache-2.0
#pragma once
// GPU and cluster specs written back as preset TOML (what `epsim calibrate fit` writes): every field
// explicit, numbers in their shortest exact form, so parsing the text gives the spec back bit for bit.
#include <string>

#include "hardware/cluster_spec.hpp"
#include "hardware/gpu_spec.hpp"

namespace epsim::hardware {

/// `header` (comment lines, each starting with "# ") goes first.
std::string gpu_spec_toml(const GpuSpec& gpu, const std::string& header = {});
std::string cluster_spec_toml(const ClusterSpec& cluster, const std::string& header = {});

/// Reads preset text back with the validator every reader of a preset file uses (parse_gpu_spec,
/// parse_cluster_spec): a writer calls these before writing, so it never leaves a preset the readers
/// refuse. Throws core::Error naming `where` and the key.
GpuSpec read_gpu_spec_toml(const std::string& text, const std::string& where);
ClusterSpec read_cluster_spec_toml(const std::string& text, const std::string& where);

}  // namespace epsim::hardware
