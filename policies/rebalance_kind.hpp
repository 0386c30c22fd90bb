// SPDX-License-Identifier: Apache-2.0
#pragma once
// What kind of placement change a rebalance trigger decided (for observers: events.csv, the timeline).
#include <cstdint>
#include <string_view>

namespace epsim::policies {

enum class RebalanceKind : std::uint8_t {
  other,                    ///< a trigger that does not say (tests' hand-written triggers)
  eplb_periodic,            ///< "periodic": vLLM-style EPLB every interval_steps steps
  vibe_recalibration,       ///< "drift": ViBE's drift-triggered recalibration
  director_reoptimisation,  ///< "director": DIRECTOR's online re-optimisation
};

constexpr std::string_view to_string(RebalanceKind k) {
  switch (k) {
    case RebalanceKind::eplb_periodic:
      return "eplb_periodic";
    case RebalanceKind::vibe_recalibration:
      return "vibe_recalibration";
    case RebalanceKind::director_reoptimisation:
      return "director_reoptimisation";
    case RebalanceKind::other:
      break;
  }
  return "rebalance";
}

}  // namespace epsim::policies
