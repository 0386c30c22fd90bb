// SPDX-License-Identifier: Apache-2.0
#include "policies/metro/metro_routing.hpp"

#include <algorithm>
#include <array>
#include <string_view>
#include <tuple>

namespace epsim::policies {

MetroConfig parse_metro_config(core::ParamTable& t) {
  static constexpr std::array<core::Choice<MetroConfig::Mode>, 2> k_modes{
      {{"greedy", MetroConfig::Mode::greedy}, {"exact", MetroConfig::Mode::exact}}};
  static constexpr std::array<core::Choice<MetroConfig::Phases>, 2> k_phases{
      {{"decode", MetroConfig::Phases::decode}, {"all", MetroConfig::Phases::all}}};
  MetroConfig c;
  c.mode = t.choice<MetroConfig::Mode>(
      "mode", MetroConfig::Mode::greedy,
      "greedy: each expert to its candidate GPU with the fewest activated experts (the paper's "
      "Algorithm 1); exact: the optimum by binary search + max flow (slow; measures the greedy's gap)",
      k_modes);
  c.phases = t.choice<MetroConfig::Phases>(
      "phases", MetroConfig::Phases::decode,
      "decode: metro routes decode-only steps, steps with prefill tokens are split evenly with an "
      "all-to-all dispatch (as in the paper); all: metro routes every step",
      k_phases);
  return c;
}

void MetroRouting::assign(const LayerPlacement& placement, int slot, std::int32_t tokens,
                          std::span<std::int32_t> slot_tokens) {
  const auto g = static_cast<std::size_t>(placement.gpu_of_slot(slot));
  slot_tokens[static_cast<std::size_t>(slot)] = tokens;
  ++gpu_activated_[g];
  gpu_tokens_[g] += tokens;
}

int MetroRouting::route_greedy(std::span<const std::int32_t> expert_tokens, const LayerPlacement& placement,
                               std::span<std::int32_t> slot_tokens) {
  // Sized on first use; assign / clear keep the capacity, so later calls do not allocate.
  gpu_activated_.assign(static_cast<std::size_t>(placement.num_gpus), 0);
  gpu_tokens_.assign(static_cast<std::size_t>(placement.num_gpus), 0);
  replicated_.reserve(static_cast<std::size_t>(placement.num_experts));
  replicated_.clear();
  // Forced experts first (all replicas on one GPU, in particular single-replica ones): their GPUs'
  // counts are known before any choice is made, so the replicated experts steer around them.
  for (int e = 0; e < placement.num_experts; ++e) {
    const std::int32_t n = expert_tokens[static_cast<std::size_t>(e)];
    if (n <= 0) {
      continue;  // activates nothing
    }
    const std::span<const int> slots = placement.replicas(e);
    const int g = placement.gpu_of_slot(slots[0]);
    if (std::all_of(slots.begin() + 1, slots.end(), [&](int s) { return placement.gpu_of_slot(s) == g; })) {
      assign(placement, *std::min_element(slots.begin(), slots.end()), n, slot_tokens);
    } else {
      replicated_.push_back(e);
    }
  }
  // Then the replicated experts in ascending id, each to the candidate GPU with the fewest activated
  // experts so far; ties: fewest tokens so far, then lowest GPU id (then lowest slot on that GPU).
  for (const int e : replicated_) {
    const std::span<const int> slots = placement.replicas(e);
    int best = slots[0];
    auto b = static_cast<std::size_t>(placement.gpu_of_slot(best));
    for (const int s : slots.subspan(1)) {
      const auto g = static_cast<std::size_t>(placement.gpu_of_slot(s));
      // Slots are gpu-major, so comparing slots orders by GPU id, then by slot within the GPU.
      if (std::tie(gpu_activated_[g], gpu_tokens_[g], s) < std::tie(gpu_activated_[b], gpu_tokens_[b], best)) {
        best = s;
        b = g;
      }
    }
    assign(placement, best, expert_tokens[static_cast<std::size_t>(e)], slot_tokens);
  }
  return gpu_activated_.empty() ? 0 : *std::max_element(gpu_activated_.begin(), gpu_activated_.end());
}

void MetroRouting::route_exact(std::span<const std::int32_t> expert_tokens, const LayerPlacement& placement,
                               std::span<std::int32_t> slot_tokens) {
  // The greedy's value is feasible: the binary search starts below it.
  const int greedy = route_greedy(expert_tokens, placement, slot_tokens);
  exact_.solve(expert_tokens, placement, greedy);
  std::fill(slot_tokens.begin(), slot_tokens.end(), 0);
  const std::span<const int> chosen = exact_.expert_slot();
  for (int e = 0; e < placement.num_experts; ++e) {
    const int s = chosen[static_cast<std::size_t>(e)];
    if (s >= 0) {
      slot_tokens[static_cast<std::size_t>(s)] = expert_tokens[static_cast<std::size_t>(e)];
    }
  }
}

void MetroRouting::route(const StepLayerLoad& load, const LayerPlacement& placement, RoutedLoad& out) {
  const bool decode_step = load.prefill_tokens == 0 && load.decode_tokens > 0;
  if (cfg_.phases == MetroConfig::Phases::decode && !decode_step) {
    even_.route(load, placement, out);  // compute-bound prefill: balance tokens, all-to-all dispatch
    return;
  }
  std::fill(out.slot_tokens.begin(), out.slot_tokens.end(), 0);
  out.all_gather_dispatch = true;
  out.per_origin = false;
  if (cfg_.mode == MetroConfig::Mode::exact) {
    route_exact(load.expert_tokens, placement, out.slot_tokens);
  } else {
    route_greedy(load.expert_tokens, placement, out.slot_tokens);
  }
}

int max_activated_per_gpu(const LayerPlacement& placement, std::span<const std::int32_t> slot_tokens) {
  int best = 0;
  for (int g = 0; g < placement.num_gpus; ++g) {
    int activated = 0;
    for (int s = g * placement.slots_per_gpu; s < (g + 1) * placement.slots_per_gpu; ++s) {
      activated += slot_tokens[static_cast<std::size_t>(s)] > 0 ? 1 : 0;
    }
    best = std::max(best, activated);
  }
  return best;
}

}  // namespace epsim::policies
