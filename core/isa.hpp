// SPDX-License-Identifier: Apache-2.0
#pragma once
// The instruction sets the step loop's vector kernels are compiled for, chosen at run time. Every path
// computes the same bits (kernels use only IEEE-exact element operations, no contraction): the choice is
// speed alone. EPSIM_ISA=baseline|avx2|avx512 forces one (the tests run the goldens on each).
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace epsim::core {

enum class Isa : std::uint8_t { baseline, avx2, avx512 };

inline constexpr Isa k_all_isas[] = {Isa::baseline, Isa::avx2, Isa::avx512};

std::string_view isa_name(Isa isa);
std::optional<Isa> parse_isa(std::string_view name);
/// Whether this CPU runs `isa`'s kernels (AVX2 needs AVX2; AVX-512 needs F, DQ and VL).
bool isa_supported(Isa isa);
/// The sets of k_all_isas this CPU runs, narrowest first (tests and benchmarks run each).
std::vector<Isa> supported_isas();
/// The widest supported path, or EPSIM_ISA's when set; read once. Throws core::Error naming the variable
/// when it names no path or one this CPU lacks.
Isa active_isa();

}  // namespace epsim::core
