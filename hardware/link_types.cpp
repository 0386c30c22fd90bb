// SPDX-License-Identifier: Apache-2.0
#include "hardware/link_types.hpp"

#include <fmt/format.h>

#include <toml++/toml.h>
#include <array>
#include <span>

#include "core/error.hpp"
#include "core/presets.hpp"

namespace epsim::hardware {

std::span<const core::EmbeddedFile> embedded_links();

namespace {
constexpr std::array<core::Choice<NcclHw>, 2> k_nccl_hw{{{"nvlink", NcclHw::nvlink}, {"pci", NcclHw::pci}}};

const toml::table& links_table() {
  static const core::PresetCatalog catalog("links", embedded_links());
  return catalog.get("links", "links.toml", "");
}
}  // namespace

std::vector<std::string> link_type_names() {
  std::vector<std::string> out;
  for (const auto& [k, v] : links_table()) {
    out.emplace_back(k.str());
  }
  return out;
}

LinkSpec link_type(const std::string& name) {
  const toml::table* t = links_table().get_as<toml::table>(name);
  if (t == nullptr) {
    throw core::Error(
        fmt::format("unknown link type \"{}\"; valid values are: {}", name, fmt::join(link_type_names(), ", ")));
  }
  const auto number = [t](const char* key, double def) {
    return t->get(key) != nullptr ? t->get(key)->value_or(def) : def;
  };
  LinkSpec l{number("bw_gbps", 0.0), number("latency_us", 0.0), number("efficiency", 1.0), number("nvls_gbps", 0.0)};
  l.nccl_ll_max_gbps = number("nccl_ll_max_gbps", 0.0);
  const std::string hw = t->get("nccl_hw") != nullptr ? t->get("nccl_hw")->value_or(std::string("nvlink")) : "nvlink";
  l.nccl_hw = hw == "pci" ? NcclHw::pci : NcclHw::nvlink;
  return l;
}

LinkSpec parse_link_table(core::ParamTable& t, const std::string& default_type) {
  const std::string type = t.string("link", default_type, "link type (see hardware/presets/links.toml)");
  LinkSpec base;
  try {
    base = link_type(type);
  } catch (const core::Error& e) {
    t.fail("link", e.what());
  }
  LinkSpec l;
  l.bw_gbps =
      t.real("bw_gbps", base.bw_gbps, "bandwidth per direction, GB/s (default: the link type's)", core::k_positive);
  l.latency_us = t.real("latency_us", base.latency_us, "latency of one hop, microseconds (default: the type's)",
                        core::k_non_negative);
  l.efficiency = t.real("efficiency", base.efficiency,
                        "share of bw_gbps transfers achieve, (0, 1] (default: the type's, measured)", {0.0, 1.0, true});
  l.nvls_gbps =
      t.real("nvls_gbps", base.nvls_gbps, "NVLink SHARP all-reduce bandwidth, GB/s (0 = none)", core::k_non_negative);
  l.nccl_hw = t.choice<NcclHw>("nccl_hw", base.nccl_hw,
                               "NCCL's class of the link: its hop latencies (default: the type's)", k_nccl_hw);
  l.nccl_ll_max_gbps = t.real("nccl_ll_max_gbps", base.nccl_ll_max_gbps,
                              "NCCL's LL protocol bandwidth cap on one node, GB/s (0 = none; default: the type's)",
                              core::k_non_negative);
  t.finish();
  return l;
}

}  // namespace epsim::hardware
