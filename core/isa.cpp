// SPDX-License-Identifier: Apache-2.0
#include "core/isa.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdlib>
#include <span>
#include <string>

#include "core/error.hpp"
#include "core/named.hpp"

namespace epsim::core {

namespace {

struct NamedIsa {
  std::string_view name;
  Isa isa;
};
constexpr std::array<NamedIsa, 3> k_names{{{"baseline", Isa::baseline}, {"avx2", Isa::avx2}, {"avx512", Isa::avx512}}};
static_assert(k_names[0].isa == Isa::baseline && k_names[1].isa == Isa::avx2 && k_names[2].isa == Isa::avx512,
              "isa_name indexes the table by the enum's value");

}  // namespace

std::string_view isa_name(Isa isa) {
  return k_names[static_cast<std::size_t>(isa)].name;
}

std::optional<Isa> parse_isa(std::string_view name) {
  const NamedIsa* found = find_named(std::span<const NamedIsa>(k_names), name);
  return found != nullptr ? std::optional<Isa>(found->isa) : std::nullopt;
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

std::vector<Isa> supported_isas() {
  std::vector<Isa> out;
  for (const Isa isa : k_all_isas) {
    if (isa_supported(isa)) {
      out.push_back(isa);
    }
  }
  return out;
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
  return supported_isas().back();  // the baseline always runs
}

}  // namespace

Isa active_isa() {
  static const Isa isa = choose_isa();
  return isa;
}

}  // namespace epsim::core
