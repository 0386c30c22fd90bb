// SPDX-License-Identifier: Apache-2.0
#pragma once
// The configured caps that can hold back a DP rank's admissions while requests wait: its running seats
// (scheduler.max_running_requests), its step's token budget (scheduler.max_batch_tokens) and its KV
// cache (blocks sized by scheduler.gpu_memory_utilization). A run whose admissions a cap held back in a
// sizeable share of its measured rank-steps measures that setting, not the hardware: summary.json's
// metrics.limits says which (docs/guarantees.md).
#include <array>
#include <cstdint>
#include <string_view>

namespace epsim::serving {

enum class AdmissionCap : std::uint8_t { seats, batch_tokens, kv_cache };

inline constexpr std::array<AdmissionCap, 3> k_admission_caps = {AdmissionCap::seats, AdmissionCap::batch_tokens,
                                                                 AdmissionCap::kv_cache};

/// A cap that held back waiting requests in at least this share of the measured rank-steps limits the
/// run (metrics.limits.limited_by). Below saturation a seat cap with Poisson arrivals binds in well
/// under 1 % of steps; a run pinned at the cap, in most of them.
inline constexpr double k_cap_binding_threshold = 0.05;

/// summary.json's name of a cap: metrics.limits.<name>.
constexpr std::string_view cap_name(AdmissionCap c) {
  switch (c) {
    case AdmissionCap::seats:
      return "seats";
    case AdmissionCap::batch_tokens:
      return "batch_tokens";
    case AdmissionCap::kv_cache:
      return "kv_cache";
  }
  return "";
}

/// The setting that sets a cap, for messages.
constexpr std::string_view cap_setting(AdmissionCap c) {
  switch (c) {
    case AdmissionCap::seats:
      return "scheduler.max_running_requests";
    case AdmissionCap::batch_tokens:
      return "scheduler.max_batch_tokens";
    case AdmissionCap::kv_cache:
      return "KV cache (scheduler.gpu_memory_utilization)";
  }
  return "";
}

/// Rank-steps, and those in which each cap held back a rank's waiting requests (a rank-step is one DP
/// rank in one step; a rank counts once per step, under the first cap its admissions met).
struct CapTally {
  std::array<std::int64_t, k_admission_caps.size()> bound{};
  std::int64_t rank_steps = 0;

  std::int64_t& operator[](AdmissionCap c) { return bound[static_cast<std::size_t>(c)]; }
  std::int64_t operator[](AdmissionCap c) const { return bound[static_cast<std::size_t>(c)]; }
  void add(const CapTally& o) {
    for (std::size_t i = 0; i < bound.size(); ++i) {
      bound[i] += o.bound[i];
    }
    rank_steps += o.rank_steps;
  }
  /// Share of the rank-steps in which `c` held back waiting requests (0 without any).
  double binding_fraction(AdmissionCap c) const {
    return rank_steps > 0 ? static_cast<double>((*this)[c]) / static_cast<double>(rank_steps) : 0.0;
  }
  bool limits(AdmissionCap c) const { return rank_steps > 0 && binding_fraction(c) >= k_cap_binding_threshold; }
};

}  // namespace epsim::serving
