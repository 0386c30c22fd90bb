// SPDX-License-Identifier: Apache-2.0
// An arrival replay CSV (arrival_s[,prompt_tokens,output_tokens]) read through the request generator.
#include <cstddef>
#include <cstdint>

#include "core/error.hpp"
#include "core/random_streams.hpp"
#include "fuzz/fuzz_input.hpp"
#include "workloads/request_generator.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  epsim::workloads::WorkloadConfig cfg;
  cfg.arrivals.kind = epsim::workloads::ArrivalConfig::Kind::replay;
  cfg.arrivals.replay_file = epsim::fuzz::input_file(data, size, ".csv").string();
  try {
    epsim::workloads::RequestGenerator gen(cfg, epsim::core::RandomStreams(1));
    for (int i = 0; i < 100000 && gen.next(); ++i) {
    }
  } catch (const epsim::core::Error&) {
  }
  return 0;
}
