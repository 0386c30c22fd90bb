// SPDX-License-Identifier: Apache-2.0
#include "core/isa.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <string>

#include "core/error.hpp"

namespace epsim::core {

std::string_view isa_name(Isa isa) {
  switch (isa) {
    case Isa::avx2:
      return "avx2";
    case Isa::avx512:
      return "avx512";
    case Isa::baseline:
      break;
  }
  return "baseline";
}

std::optional<Isa> parse_isa(std::string_view name) {
  for (const Isa isa : k_all_isas) {
    if (isa_name(isa) == name) {
      return isa;
    }
  }
  return std::nullopt;
}

bool isa_supported(Isa isa) {
#if defined(__x86_64__)
  switch (isa) {
    case Isa::avx2:
      return __builtin_cpu_supports("avx2");
    case Isa::avx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512vl");
    case Isa::baseline:
      return true;
  }
  return false;
#else
  return isa == Isa::baseline;
#endif
}

namespace {

Isa choose_isa() {
  if (const char* forced = std::getenv("EPSIM_ISA"); forced != nullptr && *forced != '\0') {
    const std::optional<Isa> isa = parse_isa(forced);
    if (!isa) {
      throw Error(fmt::format("EPSIM_ISA: expected baseline, avx2 or avx512, got '{}'", forced));
    }
    if (!isa_supported(*isa)) {
      throw Error(fmt::format("EPSIM_ISA={}: this CPU does not support it", forced));
    }
    return *isa;
  }
  for (const Isa isa : {Isa::avx512, Isa::avx2}) {
    if (isa_supported(isa)) {
      return isa;
    }
  }
  return Isa::baseline;
}

}  // namespace

Isa active_isa() {
  static const Isa isa = choose_isa();
  return isa;
}

}  // namespace epsim::core
