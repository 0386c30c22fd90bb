// SPDX-License-Identifier: Apache-2.0
#include "engines/vllm_placement.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "engines/json_reading.hpp"

namespace epsim::engines {
namespace {

// The layers of `rows` (one per MoE layer) as a placement, each checked.
policies::Placement from_rows(std::vector<std::vector<int>> rows, const LayerLayout& layout, int num_experts,
                              int num_gpus, const std::string& key, const std::string& where) {
  if (static_cast<int>(rows.size()) != layout.num_moe_layers()) {
    throw core::Error(fmt::format("{}: {} has {} rows, the model has {} MoE layers (vLLM numbers MoE layers only)",
                                  where, key, rows.size(), layout.num_moe_layers()));
  }
  policies::Placement p;
  for (std::size_t l = 0; l < rows.size(); ++l) {
    p.layers.push_back(checked_layer(std::move(rows[l]), num_experts, num_gpus, fmt::format("{}[{}]", key, l)));
  }
  return p;
}

}  // namespace

EplbMaps eplb_maps(const policies::Placement& p) {
  int width = 0;
  for (const auto& layer : p.layers) {
    width = std::max(width, layer.max_replicas);
  }
  EplbMaps m;
  for (const auto& layer : p.layers) {
    m.phy2log.push_back(layer.phy2log);
    m.logcnt.push_back(layer.logcnt);
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (int e = 0; e < layer.num_experts; ++e) {
      std::vector<int> r(static_cast<std::size_t>(width), -1);
      const auto reps = layer.replicas(e);
      std::copy(reps.begin(), reps.end(), r.begin());
      rows.push_back(r);
    }
    m.log2phy.push_back(rows);
  }
  return m;
}

std::string write_vllm_eplb_state(const PlacementExport& x) {
  require_full_slots(x.placement, "vllm");
  EplbMaps m = eplb_maps(x.placement);
  nlohmann::ordered_json j;
  j["physical_to_logical_map"] = std::move(m.phy2log);
  j["logical_to_physical_map"] = std::move(m.log2phy);
  j["logical_replica_count"] = std::move(m.logcnt);
  return j.dump() + "\n";
}

policies::Placement read_vllm_eplb_state(const std::string& text, const LayerLayout& layout, int num_experts,
                                         int num_gpus, const std::string& where) {
  const nlohmann::json j = parse_json(text, where);
  const char* what = "vLLM EplbState maps";
  auto phy = int_rows(required_key(j, "physical_to_logical_map", what, where), "physical_to_logical_map", where);
  policies::Placement p = from_rows(phy, layout, num_experts, num_gpus, "physical_to_logical_map", where);
  // The two derived maps must agree with the slots.
  const nlohmann::json& log2phy = required_key(j, "logical_to_physical_map", what, where);
  const auto counts = int_rows(required_key(j, "logical_replica_count", what, where), "logical_replica_count", where);
  if (!log2phy.is_array() || log2phy.size() != p.layers.size() || counts.size() != p.layers.size()) {
    throw core::Error(
        fmt::format("{}: logical_to_physical_map and logical_replica_count need {} layers", where, p.layers.size()));
  }
  for (std::size_t l = 0; l < p.layers.size(); ++l) {
    const auto& layer = p.layers[l];
    if (counts[l] != layer.logcnt) {
      throw core::Error(
          fmt::format("{}: logical_replica_count[{}] disagrees with physical_to_logical_map[{}]", where, l, l));
    }
    const auto rows = int_rows(log2phy[l], fmt::format("logical_to_physical_map[{}]", l), where);
    if (static_cast<int>(rows.size()) != layer.num_experts) {
      throw core::Error(fmt::format("{}: logical_to_physical_map[{}] has {} rows, expected one per expert ({})", where,
                                    l, rows.size(), layer.num_experts));
    }
    for (int e = 0; e < layer.num_experts; ++e) {
      const auto reps = layer.replicas(e);
      const auto& row = rows[static_cast<std::size_t>(e)];
      std::vector<int> listed;
      for (const int s : row) {
        if (s >= 0) {
          listed.push_back(s);
        }
      }
      std::vector<int> want(reps.begin(), reps.end());
      std::sort(listed.begin(), listed.end());
      std::sort(want.begin(), want.end());
      if (listed != want) {
        throw core::Error(fmt::format("{}: logical_to_physical_map[{}][{}] disagrees with physical_to_logical_map[{}]",
                                      where, l, e, l));
      }
    }
  }
  return p;
}

std::string write_vllm_slots(const PlacementExport& x) {
  require_full_slots(x.placement, "vllm-slots");
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& layer : x.placement.layers) {
    rows.push_back(layer.phy2log);
  }
  return rows.dump() + "\n";
}

policies::Placement read_vllm_slots(const std::string& text, const LayerLayout& layout, int num_experts, int num_gpus,
                                    const std::string& where) {
  auto rows = int_rows(parse_json(text, where), "the placement", where);
  return from_rows(std::move(rows), layout, num_experts, num_gpus, "the placement", where);
}

}  // namespace epsim::engines
