// SPDX-License-Identifier: Apache-2.0
#pragma once
// Named link types (NVLink 3/4/5, Infinity Fabric, PCIe, InfiniBand, Ethernet) from
// hardware/presets/links.toml, and the parsing of a link given by type name and/or explicit numbers.
#include <string>
#include <vector>

#include "core/params.hpp"
#include "hardware/topology.hpp"

namespace epsim::hardware {

/// The link type `name`; throws core::Error listing the valid names if unknown.
LinkSpec link_type(const std::string& name);
std::vector<std::string> link_type_names();

/// Reads a link table: `link` (a type name) and/or `bw_gbps`, `latency_us` overriding it.
LinkSpec parse_link_table(core::ParamTable& t, const std::string& default_type);

}  // namespace epsim::hardware
