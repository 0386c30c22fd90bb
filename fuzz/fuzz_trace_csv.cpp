// SPDX-License-Identifier: Apache-2.0
// `epsim trace convert` of a CSV (step,layer,expert,tokens) into a trace of 2 layers x 8 experts, top-2.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "core/error.hpp"
#include "fuzz/fuzz_input.hpp"
#include "workloads/trace_tools.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = epsim::fuzz::input_file(data, size, ".csv");
  epsim::trace::Header h;
  h.set_version(1);
  h.set_moe_layers(2);
  h.set_experts(8);
  h.set_top_k(2);
  auto out = path;
  out += ".trace";
  try {
    (void)epsim::workloads::import_csv(path, h, out);
  } catch (const epsim::core::Error&) {
  }
  std::filesystem::remove(out);
  return 0;
}
