// SPDX-License-Identifier: Apache-2.0
// JSON nesting is measured on the text before any parser sees it: brackets inside strings (escaped
// quotes included) do not count, and a 200,000-level file is refused at once with its line.
#include <catch2/catch.hpp>
#include <string>

#include "core/error.hpp"
#include "core/json_depth.hpp"

using Catch::Contains;
using epsim::core::check_json_depth;
using epsim::core::json_nesting_depth;

namespace {
std::string nested(int levels, char open = '[', char close = ']') {
  return std::string(static_cast<std::size_t>(levels), open) + std::string(static_cast<std::size_t>(levels), close);
}
}  // namespace

TEST_CASE("json_nesting_depth counts arrays and objects, not brackets in strings") {
  CHECK(json_nesting_depth("1") == 0);
  CHECK(json_nesting_depth("[]") == 1);
  CHECK(json_nesting_depth(R"({"a": [1, {"b": [[]]}], "c": {}})") == 5);  // { [ { [ [
  CHECK(json_nesting_depth(R"(["[[[[", "\"[[[", {"k]]": "{{"}])") == 2);
  CHECK(json_nesting_depth(R"("\\" [[1]])") == 2);  // an escaped backslash ends before the quote
  CHECK(json_nesting_depth(nested(300)) == 257);    // the scan stops one past the bound
  CHECK(json_nesting_depth(nested(300), 1000) == 300);
}

TEST_CASE("check_json_depth refuses deeper than the bound, naming the source and line") {
  REQUIRE_NOTHROW(check_json_depth(nested(256), "a.json"));
  REQUIRE_THROWS_AS(check_json_depth(nested(257), "a.json"), epsim::core::Error);
  REQUIRE_THROWS_WITH(check_json_depth("{\n\"x\":\n" + nested(200000), "summary.json"),
                      "summary.json: line 3: JSON nests deeper than 256 levels of arrays and objects");
  REQUIRE_THROWS_WITH(check_json_depth(nested(5, '{', '}'), "b.json", 4), Contains("deeper than 4 levels"));
}
