// SPDX-License-Identifier: Apache-2.0
// `epsim calibrate`'s inputs: the measurement table CSV (parsed in memory), and every importer of the
// registry (calibration/importers.hpp: vLLM's benchmark_moe output, PyTorch profiler traces, nsys stats CSVs,
// nccl-tests logs, Vidur profiles). The first byte picks the reader and, for the importers, the options a
// user would pass (the op for formats without one, a model for expert shapes).
#include <cstddef>
#include <cstdint>
#include <string>

#include "calibration/importers.hpp"
#include "calibration/measurement_table.hpp"
#include "core/error.hpp"
#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace cal = epsim::calibration;
  const auto formats = cal::importers();
  epsim::fuzz::Selected in;
  if (!epsim::fuzz::select(data, size, formats.size() + 1, in)) {
    return 0;
  }
  try {
    if (in.choice == formats.size()) {
      (void)cal::parse_measurement_table(in.text(), "fuzz.csv");
      return 0;
    }
    const char* ops[] = {"all_reduce", "all_to_all", "send_recv", "expert_ffn"};
    cal::ImportOptions o;
    o.model = "mixtral-8x7b";
    o.tp = 1;
    o.op = ops[(data[0] >> 4) % 4];
    const auto path = epsim::fuzz::input_file(in.data, in.size, ".txt");
    (void)formats[in.choice].run({&path, 1}, o);
  } catch (const epsim::core::Error&) {
  }
  return 0;
}
