// SPDX-License-Identifier: Apache-2.0
// A binary routing trace (docs/workloads.md's format): the signature, the header, every step read and
// validated against it.
#include <cstddef>
#include <cstdint>

#include <google/protobuf/stubs/logging.h>

#include "core/error.hpp"
#include "fuzz/fuzz_input.hpp"
#include "workloads/trace_io.hpp"

// Protobuf logs every invalid UTF-8 string it meets; the reader reports the failed parse itself.
extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = epsim::fuzz::input_file(data, size, ".trace");
  try {
    epsim::workloads::TraceReader r(path);
    epsim::trace::Step s;
    while (r.next(s)) {
    }
  } catch (const epsim::core::Error&) {
  }
  return 0;
}
