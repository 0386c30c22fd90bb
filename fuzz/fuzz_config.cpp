// SPDX-License-Identifier: Apache-2.0
// TOML config text, as a file or a --set gives it: the depth guard, toml++'s parser, then epsim's own
// readers over the [workload] section (arrivals, lengths, counts and their bounds).
#include <toml++/toml.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/error.hpp"
#include "core/params.hpp"
#include "core/toml_guard.hpp"
#include "workloads/request_generator.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    epsim::core::check_toml_key_depth(text, "fuzz.toml");
    const toml::table t = toml::parse(text, std::string_view("fuzz.toml"));
    epsim::core::ParamTable root({epsim::core::ParamLayer{&t, "fuzz.toml"}}, "");
    auto workload = root.table("workload", "workload");
    (void)epsim::workloads::parse_workload(workload);
  } catch (const epsim::core::Error&) {
  } catch (const toml::parse_error&) {
  }
  return 0;
}
