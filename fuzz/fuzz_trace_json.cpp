// SPDX-License-Identifier: Apache-2.0
// `epsim trace convert` of a per-token JSON dump ({"experts", "top_k", "steps": [{"layers": ...}]}).
#include <cstddef>
#include <cstdint>
#include <filesystem>

#include "core/error.hpp"
#include "fuzz/fuzz_input.hpp"
#include "workloads/trace_tools.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = epsim::fuzz::input_file(data, size, ".json");
  auto out = path;
  out += ".trace";
  try {
    (void)epsim::workloads::import_token_json(path, out);
  } catch (const epsim::core::Error&) {
  }
  std::filesystem::remove(out);
  return 0;
}
