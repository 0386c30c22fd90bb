// SPDX-License-Identifier: Apache-2.0
#pragma once
// Checks TOML text before toml++ parses it. toml++ (3.3, Debian 12) recurses once per level of a dotted
// key, so an 80 KB key of 40,000 levels (`a.a.a...`, in a file or a --set) overflows the stack and the
// process dies; its own limit covers nested arrays and inline tables only. Config keys nest a few levels
// deep: a key of more than k_max_toml_key_depth levels is refused with the line it is on.
#include <string_view>

namespace epsim::core {

inline constexpr int k_max_toml_key_depth = 64;

/// Throws core::ConfigError naming `source` and the line when a dotted key (in a key position, a table
/// header or an inline table) has more than k_max_toml_key_depth parts. Strings and comments are skipped.
void check_toml_key_depth(std::string_view text, std::string_view source);

}  // namespace epsim::core
