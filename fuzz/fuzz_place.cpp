// SPDX-License-Identifier: Apache-2.0
// What `epsim place` reads besides an engine's recording (experiments/cli/place_inputs.hpp): load CSV, load
// JSON, co-selection CSV, measured cost curves CSV, and EPLB load-history JSON. The first byte picks the
// reader, the rest is the file.
#include <cstddef>
#include <cstdint>

#include "core/error.hpp"
#include "engines/load_history.hpp"
#include "experiments/cli/place_inputs.hpp"
#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace ex = epsim::experiments;
  epsim::fuzz::Selected in;
  if (!epsim::fuzz::select(data, size, 5, in)) {
    return 0;
  }
  const char* ext[] = {".csv", ".json", ".csv", ".csv", ".json"};
  const auto path = epsim::fuzz::input_file(in.data, in.size, ext[in.choice]);
  try {
    switch (in.choice) {
      case 0:
        (void)ex::read_load_csv(path);
        break;
      case 1:
        (void)ex::read_load_json(path);
        break;
      case 2:
        (void)ex::read_coactivation(path, 4, 16);
        break;
      case 3:
        (void)ex::read_curves(path, 4);
        break;
      default:
        (void)epsim::engines::read_load_history(path, [](std::int64_t, const epsim::engines::LoadMatrix&) {});
        break;
    }
  } catch (const epsim::core::Error&) {
  }
  return 0;
}
