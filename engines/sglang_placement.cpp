// SPDX-License-Identifier: Apache-2.0
#include "engines/sglang_placement.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "engines/json_reading.hpp"

namespace epsim::engines {
namespace {

// The placement's slot count, the same in every layer (SGLang's map is one rectangular tensor).
int slots_of(const policies::Placement& p) {
  const int slots = p.layers.empty() ? 0 : p.layers[0].num_slots();
  for (const auto& layer : p.layers) {
    if (layer.num_slots() != slots) {
      throw core::Error("sglang: every layer needs the same number of slots");
    }
  }
  return slots;
}

void check_layers(const PlacementExport& x, std::size_t rows) {
  if (static_cast<int>(rows) != x.layout.num_moe_layers()) {
    throw core::Error(fmt::format("sglang: {} MoE layers placed, the model has {}", rows, x.layout.num_moe_layers()));
  }
}

}  // namespace

std::string write_sglang_map(const PlacementExport& x) {
  require_full_slots(x.placement, "sglang");
  check_layers(x, x.placement.layers.size());
  const int slots = slots_of(x.placement);
  const int experts = x.placement.layers.empty() ? 1 : x.placement.layers[0].num_experts;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (int h = 0; h < x.layout.hidden_layers; ++h) {
    const int m = x.layout.moe_index(h);
    if (m >= 0) {
      rows.push_back(x.placement.layers[static_cast<std::size_t>(m)].phy2log);
    } else {
      std::vector<int> trivial(static_cast<std::size_t>(slots));
      for (int s = 0; s < slots; ++s) {
        trivial[static_cast<std::size_t>(s)] = s % experts;
      }
      rows.push_back(trivial);
    }
  }
  nlohmann::ordered_json j;
  j["physical_to_logical_map"] = rows;
  return j.dump() + "\n";
}

policies::Placement read_sglang_map(const std::string& text, const LayerLayout& layout, int num_experts, int num_gpus,
                                    const std::string& where) {
  const nlohmann::json j = parse_json(text, where);
  if (j.is_object() && j.size() != 1) {
    throw core::Error(where + ": SGLang passes every key as an argument: expected physical_to_logical_map only");
  }
  const auto rows =
      int_rows(required_key(j, "physical_to_logical_map", "[[logical expert per slot] per hidden layer]", where),
               "physical_to_logical_map", where);
  if (static_cast<int>(rows.size()) != layout.hidden_layers) {
    throw core::Error(
        fmt::format("{}: physical_to_logical_map has {} rows, the model has {} hidden layers "
                    "(SGLang numbers every layer, dense ones included)",
                    where, rows.size(), layout.hidden_layers));
  }
  policies::Placement p;
  for (std::size_t h = 0; h < rows.size(); ++h) {
    // Dense rows are read too: SGLang builds its dispatch tables from every row.
    policies::LayerPlacement layer =
        checked_layer(rows[h], num_experts, num_gpus, fmt::format("{}: physical_to_logical_map[{}]", where, h));
    if (rows[h].size() != rows[0].size()) {
      throw core::Error(fmt::format("{}: physical_to_logical_map[{}] has {} slots, row 0 has {}", where, h,
                                    rows[h].size(), rows[0].size()));
    }
    if (layout.moe_index(static_cast<int>(h)) >= 0) {
      p.layers.push_back(std::move(layer));
    }
  }
  return p;
}

std::string write_sglang_logical_count(const PlacementExport& x) {
  check_layers(x, x.load.size());
  const std::size_t experts = x.load.empty() ? 0 : x.load[0].size();
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (int h = 0; h < x.layout.hidden_layers; ++h) {
    const int m = x.layout.moe_index(h);
    std::vector<std::int64_t> row(experts, 0);
    if (m >= 0) {
      for (std::size_t e = 0; e < experts; ++e) {
        // SGLang's counts are integer tensors; loads are token counts.
        row[e] = static_cast<std::int64_t>(std::llround(x.load[static_cast<std::size_t>(m)][e]));
      }
    }
    rows.push_back(row);
  }
  nlohmann::ordered_json j;
  j["logical_count"] = rows;
  return j.dump() + "\n";
}

}  // namespace epsim::engines
