// SPDX-License-Identifier: Apache-2.0
// A study file, as `epsim sweep STUDY.toml` loads and plans it: the [study] table, the axes (config keys,
// policy and setup levels, zipped axes), the objective, the max-rate options and an inline [base]
// experiment, then the plan of every point (each one a whole experiment config). A base given as a
// path is resolved against an empty scratch folder, so only inline bases reach the experiment readers.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/error.hpp"
#include "experiments/studies/study_plan.hpp"
#include "experiments/studies/study_spec.hpp"
#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const epsim::experiments::StudySpec spec =
        epsim::experiments::load_study_text(text, "fuzz-study.toml", epsim::fuzz::scratch_directory().string());
    (void)epsim::experiments::plan_study(spec);
  } catch (const epsim::core::Error&) {
  }
  return 0;
}
