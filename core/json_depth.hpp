// SPDX-License-Identifier: Apache-2.0
#pragma once
// Checks JSON text before a parser sees it. nlohmann::json parses iteratively but dumps, copies and
// compares recursively, and epsim's own readers walk values recursively: a 400 KB file of 200,000
// nested arrays overflowed the stack. No input epsim reads nests deeply (a summary.json echoes a config
// of at most 64 key levels under a few of its own), so text nesting deeper than k_max_json_depth
// arrays and objects is refused with the line it reaches that depth on.
#include <istream>
#include <string>
#include <string_view>

namespace epsim::core {

inline constexpr int k_max_json_depth = 256;

/// The deepest nesting of arrays and objects in `text` (strings skipped, escapes honoured), counting
/// no further than `stop_at` (the scan ends there).
int json_nesting_depth(std::string_view text, int stop_at = k_max_json_depth + 1);

/// Throws core::Error "SOURCE: line N: JSON nests deeper than 256 levels" when `text` nests deeper
/// than `max_depth`.
void check_json_depth(std::string_view text, std::string_view source, int max_depth = k_max_json_depth);

/// The whole of `in` (read_whole_input's size bound) after check_json_depth: what every JSON reader
/// hands its parser.
std::string read_json_text(std::istream& in, const std::string& source);

}  // namespace epsim::core
