// SPDX-License-Identifier: Apache-2.0
#pragma once
// The model families whose config.json epsim reads, by architecture (config.json's architectures[0]):
// for each, the fields it maps to [model] keys and the fields known not to change the cost.
#include <span>
#include <string_view>

#include "models/hf_fields.hpp"
#include "models/hf_layout.hpp"

namespace epsim::models {

struct HfFamily {
  std::string_view architecture;  ///< e.g. "DeepseekV3ForCausalLM"
  /// Maps the fields of `f` (the config's root object) into `out`; a wrapper (Llama-4, Kimi-K2.5) reads
  /// its text_config through the family named there. `accepted` and `ignored` as HfFields::finish.
  void (*derive)(HfFields& f, HfOut& out, std::span<const std::string> accepted, std::vector<std::string>& ignored);
};

/// Every family read, in the order error messages list them.
std::span<const HfFamily> hf_families();

/// The family of `architecture`, or nullptr.
const HfFamily* find_hf_family(std::string_view architecture);

}  // namespace epsim::models
