// SPDX-License-Identifier: Apache-2.0
#include "engines/vllm_ascend_placement.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "engines/json_reading.hpp"

namespace epsim::engines {
namespace {

// vllm-ascend maps expert -> local slot per device, so a second copy on one device overwrites the first.
void refuse_duplicates(const std::vector<int>& device, const std::string& where) {
  for (std::size_t i = 0; i < device.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (device[i] == device[j]) {
        throw core::Error(
            fmt::format("{}: expert {} twice on one device (vllm-ascend keeps one slot per expert "
                        "and device)",
                        where, device[i]));
      }
    }
  }
}

}  // namespace

std::string write_vllm_ascend(const PlacementExport& x) {
  require_full_slots(x.placement, "vllm-ascend");
  nlohmann::ordered_json layers = nlohmann::ordered_json::array();
  for (std::size_t m = 0; m < x.placement.layers.size(); ++m) {
    const auto& layer = x.placement.layers[m];
    nlohmann::ordered_json devices = nlohmann::ordered_json::array();
    for (int g = 0; g < layer.num_gpus; ++g) {
      const auto first = layer.phy2log.begin() + static_cast<std::ptrdiff_t>(g) * layer.slots_per_gpu;
      const std::vector<int> experts(first, first + layer.slots_per_gpu);
      refuse_duplicates(experts, fmt::format("vllm-ascend: MoE layer {}, device {}", m, g));
      nlohmann::ordered_json d;
      d["device_id"] = g;
      d["device_expert"] = experts;
      devices.push_back(d);
    }
    nlohmann::ordered_json l;
    l["layer_id"] = m;
    l["device_count"] = layer.num_gpus;
    l["device_list"] = devices;
    layers.push_back(l);
  }
  nlohmann::ordered_json j;
  j["moe_layer_count"] = x.placement.layers.size();
  j["layer_list"] = layers;
  return j.dump() + "\n";
}

policies::Placement read_vllm_ascend(const std::string& text, const LayerLayout& layout, int num_experts, int num_gpus,
                                     const std::string& where) {
  const nlohmann::json j = parse_json(text, where);
  const char* what = "vllm-ascend's expert map";
  const nlohmann::json& count = required_key(j, "moe_layer_count", what, where);
  const nlohmann::json& list = required_key(j, "layer_list", what, where);
  if (!count.is_number_integer() || count.get<int>() != layout.num_moe_layers() || !list.is_array() ||
      static_cast<int>(list.size()) != layout.num_moe_layers()) {
    throw core::Error(fmt::format("{}: moe_layer_count and layer_list must both be the model's {} MoE layers", where,
                                  layout.num_moe_layers()));
  }
  policies::Placement p;
  for (std::size_t m = 0; m < list.size(); ++m) {
    const std::string at = fmt::format("layer_list[{}]", m);
    const nlohmann::json& devices =
        required_key(list[m], "device_list", "[{\"device_expert\": [...]}, ...]", fmt::format("{}: {}", where, at));
    if (!devices.is_array() || static_cast<int>(devices.size()) != num_gpus) {
      throw core::Error(
          fmt::format("{}: {}.device_list must list the {} devices of the EP group", where, at, num_gpus));
    }
    std::vector<int> phy2log;
    std::size_t width = 0;
    for (std::size_t g = 0; g < devices.size(); ++g) {
      const std::string dat = fmt::format("{}.device_list[{}]", at, g);
      const auto experts = int_list(required_key(devices[g], "device_expert", "[logical expert per local slot]",
                                                 fmt::format("{}: {}", where, dat)),
                                    dat + ".device_expert", where);
      if (g == 0) {
        width = experts.size();
      } else if (experts.size() != width) {
        throw core::Error(
            fmt::format("{}: {}.device_expert has {} slots, device 0 has {}", where, dat, experts.size(), width));
      }
      refuse_duplicates(experts, fmt::format("{}: {}", where, dat));
      phy2log.insert(phy2log.end(), experts.begin(), experts.end());
    }
    p.layers.push_back(checked_layer(std::move(phy2log), num_experts, num_gpus, fmt::format("{}: {}", where, at)));
  }
  return p;
}

}  // namespace epsim::engines
