// SPDX-License-Identifier: Apache-2.0
#include "core/json_depth.hpp"

#include <fmt/format.h>

#include <string>

#include "core/csv_lines.hpp"
#include "core/error.hpp"

namespace epsim::core {
namespace {

struct Scan {
  int depth = 0;
  int line = 1;  ///< where the scan stopped
};

// Scans to the end or to the first place nesting reaches `stop_at`.
Scan scan(std::string_view text, int stop_at) {
  Scan s;
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++s.line;
    } else if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character, perhaps a quote
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      ++depth;
      if (depth > s.depth) {
        s.depth = depth;
        if (depth >= stop_at) {
          return s;
        }
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return s;
}

}  // namespace

int json_nesting_depth(std::string_view text, int stop_at) {
  return scan(text, stop_at).depth;
}

void check_json_depth(std::string_view text, std::string_view source, int max_depth) {
  const Scan s = scan(text, max_depth + 1);
  if (s.depth > max_depth) {
    throw Error(
        fmt::format("{}: line {}: JSON nests deeper than {} levels of arrays and objects", source, s.line, max_depth));
  }
}

std::string read_json_text(std::istream& in, const std::string& source) {
  std::string text = read_whole_input(in, source);
  check_json_depth(text, source);
  return text;
}

}  // namespace epsim::core
