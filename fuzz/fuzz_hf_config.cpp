// SPDX-License-Identifier: Apache-2.0
// A Hugging Face config.json read into [model] keys ([model] hf_config, `epsim list models --from-hf`):
// size and depth guards, nlohmann's parser, every family's field mapping, and the table printed back.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/error.hpp"
#include "models/hf_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const epsim::models::HfModelTable t = epsim::models::derive_hf_model(text, "fuzz.json", "fuzz");
    (void)epsim::models::hf_model_toml(t);
  } catch (const epsim::core::Error&) {
  }
  return 0;
}
