// SPDX-License-Identifier: Apache-2.0
#include "engines/trtllm_placement.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <map>

#include "core/error.hpp"

namespace epsim::engines {

std::string write_trtllm_yaml(const PlacementExport& x) {
  if (static_cast<int>(x.placement.layers.size()) != x.layout.num_moe_layers()) {
    throw core::Error(fmt::format("trtllm: {} MoE layers placed, the model has {}", x.placement.layers.size(),
                                  x.layout.num_moe_layers()));
  }
  require_full_slots(x.placement, "trtllm");
  const int slots = x.placement.layers.empty() ? 0 : x.placement.layers[0].num_slots();
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "num_slots" << YAML::Value << slots;
  out << YAML::Key << "layer_updates_per_iter" << YAML::Value << 0;
  out << YAML::Key << "initial_global_assignments" << YAML::Value << YAML::BeginMap;
  for (std::size_t m = 0; m < x.placement.layers.size(); ++m) {
    const auto& layer = x.placement.layers[m];
    if (layer.num_slots() != slots) {
      throw core::Error("trtllm: num_slots is one number: every layer needs the same number of slots");
    }
    out << YAML::Key << x.layout.moe_layers[m] << YAML::Value << YAML::Flow << layer.phy2log;
  }
  out << YAML::EndMap << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

policies::Placement read_trtllm_yaml(const std::string& text, const LayerLayout& layout, int num_experts, int num_gpus,
                                     const std::string& where) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw core::Error(fmt::format("{}: invalid YAML: {}", where, e.what()));
  }
  if (!root.IsMap()) {
    throw core::Error(where + ": expected a mapping of num_slots, initial_global_assignments, layer_updates_per_iter");
  }
  int slots = 0;
  std::map<int, std::vector<int>> layers;
  try {
    for (const auto& kv : root) {
      const auto key = kv.first.as<std::string>();
      if (key == "num_slots") {
        slots = kv.second.as<int>();
      } else if (key == "layer_updates_per_iter") {
        if (kv.second.as<int>() != 0) {
          throw core::Error(
              fmt::format("{}: layer_updates_per_iter = {}: the balancer moves experts online, so this "
                          "is not a static placement (expected 0)",
                          where, kv.second.as<int>()));
        }
      } else if (key == "initial_global_assignments") {
        for (const auto& layer : kv.second) {
          layers[layer.first.as<int>()] = layer.second.as<std::vector<int>>();
        }
      } else {
        throw core::Error(
            fmt::format("{}: unknown key \"{}\" (MoeLoadBalancerConfig takes num_slots, "
                        "initial_global_assignments and layer_updates_per_iter)",
                        where, key));
      }
    }
  } catch (const YAML::Exception& e) {
    throw core::Error(fmt::format("{}: line {}: {}", where, e.mark.line + 1, e.msg));
  }
  policies::Placement p;
  for (int m = 0; m < layout.num_moe_layers(); ++m) {
    const int hidden = layout.moe_layers[static_cast<std::size_t>(m)];
    const auto it = layers.find(hidden);
    if (it == layers.end()) {
      throw core::Error(
          fmt::format("{}: initial_global_assignments has no layer {} (MoE layers are keyed by hidden "
                      "layer id)",
                      where, hidden));
    }
    if (static_cast<int>(it->second.size()) != slots) {
      throw core::Error(fmt::format("{}: initial_global_assignments[{}] has {} ids, num_slots is {}", where, hidden,
                                    it->second.size(), slots));
    }
    p.layers.push_back(checked_layer(it->second, num_experts, num_gpus,
                                     fmt::format("{}: initial_global_assignments[{}]", where, hidden)));
    layers.erase(it);
  }
  // Ids past the last hidden layer are MTP draft layers (DeepSeek-V3's 61): they are not the model's to place.
  if (!layers.empty() && layers.begin()->first < layout.hidden_layers) {
    throw core::Error(fmt::format("{}: initial_global_assignments has layer {}, which is not an MoE layer of the model",
                                  where, layers.begin()->first));
  }
  return p;
}

}  // namespace epsim::engines
