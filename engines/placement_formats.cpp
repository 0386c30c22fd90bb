// SPDX-License-Identifier: Apache-2.0
#include "engines/placement_formats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "core/error.hpp"
#include "core/named.hpp"
#include "engines/sglang_placement.hpp"
#include "engines/trtllm_placement.hpp"
#include "engines/vllm_ascend_placement.hpp"
#include "engines/vllm_placement.hpp"

namespace epsim::engines {
namespace {

constexpr std::array k_formats{
    PlacementFormat{"sglang", "SGLang --init-expert-location FILE.json",
                    "{\"physical_to_logical_map\": [[slot -> logical expert] per hidden layer]}", true,
                    write_sglang_map, read_sglang_map},
    PlacementFormat{"sglang-logical-count", "SGLang --init-expert-location FILE.json",
                    "{\"logical_count\": [[tokens per expert] per hidden layer]}: SGLang runs its own EPLB", true,
                    write_sglang_logical_count, nullptr},
    PlacementFormat{"trtllm", "TensorRT-LLM moe_config.load_balancer FILE.yaml",
                    "num_slots, initial_global_assignments {hidden layer: [slot -> expert]}, "
                    "layer_updates_per_iter: 0",
                    true, write_trtllm_yaml, read_trtllm_yaml},
    PlacementFormat{"vllm-ascend", "vllm-ascend additional_config expert_map_path FILE.json",
                    "moe_layer_count, layer_list [device_list [device_expert]] per MoE layer", false, write_vllm_ascend,
                    read_vllm_ascend, true},
    PlacementFormat{"vllm", "none upstream (vLLM's EplbState, for tools and patches)",
                    "physical_to_logical_map, logical_to_physical_map, logical_replica_count per MoE layer", false,
                    write_vllm_eplb_state, read_vllm_eplb_state},
    PlacementFormat{"vllm-slots", "vLLM's open placement-file work (not merged upstream)",
                    "[[slot -> logical expert] per MoE layer]", false, write_vllm_slots, read_vllm_slots},
};

}  // namespace

std::span<const PlacementFormat> placement_formats() {
  return k_formats;
}

const PlacementFormat* find_placement_format(std::string_view name) {
  return core::find_named<PlacementFormat>(k_formats, name);
}

std::string placement_format_names() {
  std::string s;
  for (std::size_t i = 0; i < k_formats.size(); ++i) {
    s += (i == 0 ? "" : i + 1 == k_formats.size() ? " or " : ", ") + std::string(k_formats[i].name);
  }
  return s;
}

void require_full_slots(const policies::Placement& p, std::string_view format) {
  for (std::size_t m = 0; m < p.layers.size(); ++m) {
    const auto& slots = p.layers[m].phy2log;
    const auto it = std::find(slots.begin(), slots.end(), -1);
    if (it != slots.end()) {
      throw core::Error(
          fmt::format("{}: MoE layer {}, slot {} is empty; the engine loads a placement with every slot "
                      "holding an expert (choose --slots the policy fills)",
                      format, m, it - slots.begin()));
    }
  }
}

policies::LayerPlacement checked_layer(std::vector<int> phy2log, int num_experts, int num_gpus,
                                       const std::string& where) {
  const auto slots = static_cast<int>(phy2log.size());
  if (num_gpus < 1 || slots % num_gpus != 0 || slots < num_experts) {
    throw core::Error(fmt::format("{}: {} slots do not divide evenly over {} GPUs with room for all {} experts", where,
                                  slots, num_gpus, num_experts));
  }
  std::vector<int> seen(static_cast<std::size_t>(num_experts), 0);
  for (int s = 0; s < slots; ++s) {
    const int e = phy2log[static_cast<std::size_t>(s)];
    if (e < 0 || e >= num_experts) {
      throw core::Error(fmt::format("{}[{}]: expert id {} out of range [0, {})", where, s, e, num_experts));
    }
    ++seen[static_cast<std::size_t>(e)];
  }
  for (int e = 0; e < num_experts; ++e) {
    if (seen[static_cast<std::size_t>(e)] == 0) {
      throw core::Error(fmt::format("{}: expert {} has no slot", where, e));
    }
  }
  return policies::make_layer_placement(num_experts, num_gpus, slots / num_gpus, std::move(phy2log));
}

}  // namespace epsim::engines
