// SPDX-License-Identifier: Apache-2.0
// Dotted keys deeper than 64 levels are refused before toml++ recurses into them (a 40,000-level key
// overflowed its stack): the line is named; strings, comments, floats and ordinary configs pass.
#include <catch2/catch.hpp>
#include <initializer_list>
#include <string>

#include "core/error.hpp"
#include "core/toml_guard.hpp"

using Catch::Contains;
using epsim::core::check_toml_key_depth;

namespace {
std::string dotted(int levels) {
  std::string k = "a";
  for (int i = 1; i < levels; ++i) {
    k += ".a";
  }
  return k;
}
}  // namespace

namespace {
// Joins its parts (GCC 12's -Wrestrict misfires on chains of "literal" + std::string).
std::string cat(std::initializer_list<std::string> parts) {
  std::string out;
  for (const std::string& p : parts) {
    out.append(p);
  }
  return out;
}
}  // namespace

TEST_CASE("deep dotted keys are refused with their line, shallow ones and look-alikes pass") {
  REQUIRE_NOTHROW(check_toml_key_depth(cat({dotted(64), " = 1\n"}), "f.toml"));
  REQUIRE_THROWS_WITH(check_toml_key_depth(cat({"x = 1\n", dotted(65), " = 1\n"}), "f.toml"),
                      "f.toml: line 2: a dotted key nests more than 64 levels deep");
  REQUIRE_THROWS_WITH(check_toml_key_depth(cat({"[", dotted(40000), "]\n"}), "f.toml"), Contains("line 1"));
  REQUIRE_THROWS_WITH(check_toml_key_depth(cat({"t = { ", dotted(100), " = 1 }\n"}), "--set"),
                      Contains("--set: line 1"));
  // Dots in strings (one-line, multi-line, literal, with an escaped quote), comments, quoted key parts
  // and numbers do not count, and the line count follows multi-line strings.
  const std::string dots(500, '.');
  std::string floats = "f = [1.5";
  for (int i = 0; i < 100; ++i) {
    floats.append(", 2.5");
  }
  floats.append("]\n");
  const std::string ok = cat({"s = \"", dots, "\"\nm = \"\"\"\n", dots, "\n\"\"\"\nl = '", dots, "'\n# ", dots, "\n\"",
                              dots, "\".x = 1\n", floats, "e = \"a\\\"", dots, "\"\n"});
  REQUIRE_NOTHROW(check_toml_key_depth(ok, "f.toml"));
  REQUIRE_THROWS_WITH(check_toml_key_depth(cat({ok, dotted(70), " = 1\n"}), "f.toml"), Contains("line 10"));
}
