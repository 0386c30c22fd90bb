// SPDX-License-Identifier: Apache-2.0
// A whole experiment config with `--set` overrides, as `epsim run CONFIG --set K=V ...` loads it: every
// section's readers (cluster, model, workload, policies, triggers, communication, pools, outputs) and the
// overrides' own parsing. The input is the config text, then optionally a line "%%" and one override per
// line after it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "experiments/assembly/experiment_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> sets;
  if (const std::size_t cut = text.find("\n%%\n"); cut != std::string_view::npos) {
    std::string_view rest = text.substr(cut + 4);
    text = text.substr(0, cut);
    while (!rest.empty() && sets.size() < 16) {
      const std::size_t end = rest.find('\n');
      sets.emplace_back(rest.substr(0, end));
      rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    }
  }
  try {
    (void)epsim::experiments::load_config_text(text, "fuzz.toml", sets);
  } catch (const epsim::core::Error&) {
  }
  return 0;
}
