// SPDX-License-Identifier: Apache-2.0
#include "core/toml_guard.hpp"

#include <fmt/format.h>

#include <string>

#include "core/error.hpp"

namespace epsim::core {

void check_toml_key_depth(std::string_view text, std::string_view source) {
  // The dots between two separators are one dotted key's (a float or a time has one; quoted key parts
  // and strings are skipped). Every place a key can start or end is a separator.
  int dots = 0;
  int line = 1;
  std::size_t i = 0;
  const auto starts_with = [&](std::string_view s) { return text.substr(i, s.size()) == s; };
  while (i < text.size()) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      dots = 0;
      ++i;
    } else if (c == '#') {
      while (i < text.size() && text[i] != '\n') {
        ++i;
      }
    } else if (c == '"' || c == '\'') {
      // A string or a quoted key part: skip to its end, counting the lines a multi-line one spans.
      const std::string_view close = starts_with(c == '"' ? "\"\"\"" : "'''") ? text.substr(i, 3) : text.substr(i, 1);
      i += close.size();
      while (i < text.size() && !starts_with(close)) {
        if (c == '"' && text[i] == '\\') {
          ++i;  // an escaped character, perhaps a quote
        } else if (text[i] == '\n') {
          ++line;
        }
        ++i;
      }
      i += close.size();
    } else {
      if (c == '=' || c == ',' || c == '{' || c == '}' || c == '[' || c == ']') {
        dots = 0;
      } else if (c == '.' && ++dots >= k_max_toml_key_depth) {
        throw ConfigError(
            std::string(source), "",
            fmt::format("line {}: a dotted key nests more than {} levels deep", line, k_max_toml_key_depth));
      }
      ++i;
    }
  }
}

}  // namespace epsim::core
