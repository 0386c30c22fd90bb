// SPDX-License-Identifier: Apache-2.0
// A ShareGPT-style conversation file read as sessions through the request generator: the reader, and
// the turns it makes of what it read.
#include <cstddef>
#include <cstdint>

#include "core/error.hpp"
#include "core/random_streams.hpp"
#include "fuzz/fuzz_input.hpp"
#include "workloads/request_generator.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  epsim::workloads::WorkloadConfig cfg;
  cfg.num_requests = 0;
  cfg.arrivals.rate_rps = 10.0;
  cfg.sessions.kind = epsim::workloads::SessionConfig::Kind::sharegpt;
  cfg.sessions.file = epsim::fuzz::input_file(data, size, ".json").string();
  try {
    epsim::workloads::RequestGenerator gen(cfg, epsim::core::RandomStreams(1));
    for (int i = 0; i < 10000; ++i) {
      std::optional<epsim::workloads::RequestSpec> r = gen.next();
      if (!r) {
        break;
      }
      while (r) {  // every turn of its session, each finishing as it arrives
        r = gen.follow_up(*r, r->arrival_ns);
      }
    }
  } catch (const epsim::core::Error&) {
  }
  return 0;
}
