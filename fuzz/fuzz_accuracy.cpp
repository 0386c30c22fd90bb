// SPDX-License-Identifier: Apache-2.0
// An accuracy suite's point file (accuracy/README.md), as `epsim accuracy` reads it: [point], its
// overrides and every [[figure]] of each measure, checked key by key. Paths resolve against the embedded
// suite; nothing is priced (a point's run is an experiment config, which fuzz_experiment covers).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/error.hpp"
#include "experiments/cli/accuracy_suite.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void)epsim::experiments::parse_point(text, "fuzz-point.toml", epsim::experiments::SuiteFiles::embedded());
  } catch (const epsim::core::Error&) {
  }
  return 0;
}
