// SPDX-License-Identifier: Apache-2.0
#include <toml++/toml.h>
#include <array>
#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "core/params.hpp"

using namespace epsim::core;
using Catch::Contains;

namespace {
toml::table parse(std::string_view s) {
  return toml::parse(s);
}
}  // namespace

TEST_CASE("values come from the highest layer that has them") {
  const auto top = parse("a = 1\n");
  const auto bottom = parse("a = 2\nb = 3.5\n");
  ParamTable t({ParamLayer{&top, "top.toml"}, ParamLayer{&bottom, "bottom.toml"}}, "sec");
  REQUIRE(t.integer("a", 0, "doc") == 1);
  REQUIRE(t.real("b", 0.0, "doc") == 3.5);
  REQUIRE(t.real("c", 7.0, "doc") == 7.0);
  REQUIRE_NOTHROW(t.finish());
}

TEST_CASE("errors name the layer that supplied the bad value and the full key") {
  const auto top = parse("x = 1\n");
  const auto bottom = parse("rate = -3\n");
  ParamTable t({ParamLayer{&top, "top.toml"}, ParamLayer{&bottom, "preset gpus/h100"}}, "sec");
  REQUIRE_THROWS_WITH(t.real("rate", 1.0, "doc", k_positive),
                      "preset gpus/h100: sec.rate: expected a number > 0, got -3");
}

TEST_CASE("type errors say what was expected and what was found") {
  const auto tab = parse("n = \"many\"\nf = 1.5\nb = 1\nl = [1, \"x\"]\n");
  ParamTable t({ParamLayer{&tab, "f.toml"}}, "");
  REQUIRE_THROWS_WITH(t.integer("n", 0, "doc"), "f.toml: n: expected an integer, got the string \"many\"");
  REQUIRE_THROWS_WITH(t.integer("f", 0, "doc", {0, 10}),
                      "f.toml: f: expected an integer in [0, 10], got the number 1.5");
  REQUIRE_THROWS_WITH(t.boolean("b", false, "doc"), "f.toml: b: expected true or false, got the integer 1");
  REQUIRE_THROWS_WITH(t.real_list("l", "doc"), Contains("element 1: expected a number"));
}

TEST_CASE("non-finite numbers are refused where they enter, and times stay within the int64 ns clock") {
  const auto tab = parse("a = inf\nb = -inf\nc = nan\nd = 1e10\ne = 1e9\n");
  ParamTable t({ParamLayer{&tab, "f.toml"}}, "");
  REQUIRE_THROWS_WITH(t.real("a", 0.0, "doc"), "f.toml: a: expected a finite number, got inf");
  REQUIRE_THROWS_WITH(t.real("b", 0.0, "doc", k_non_negative), Contains("expected a finite number >= 0, got -inf"));
  REQUIRE_THROWS_WITH(t.optional_real("c", "none", "doc"), Contains("expected a finite number, got nan"));
  // 1e10 s is past int64 nanoseconds' ~9.2e9 s: refused, naming the limit; 1e9 s is the largest time.
  REQUIRE_THROWS_WITH(t.real("d", 0.0, "doc", k_time_s),
                      "f.toml: d: expected a number in [0, 1000000000], got 10000000000");
  REQUIRE(t.real("e", 0.0, "doc", k_positive_time_s) == 1e9);
}

TEST_CASE("unknown keys are reported with the valid ones") {
  const auto tab = parse("alpha = 1\nbetta = 2\n");
  ParamTable t({ParamLayer{&tab, "f.toml"}}, "sec");
  t.integer("alpha", 0, "doc");
  t.integer("beta", 0, "doc");
  REQUIRE_THROWS_WITH(t.finish(), "f.toml: sec.betta: unknown key; valid keys here are: alpha, beta");
}

TEST_CASE("choices list the valid values") {
  const auto tab = parse("kind = \"zipf\"\n");
  ParamTable t({ParamLayer{&tab, "f.toml"}}, "");
  constexpr std::array<std::string_view, 2> kinds{"fixed", "uniform"};
  REQUIRE_THROWS_WITH(t.choice("kind", "fixed", "doc", kinds),
                      "f.toml: kind: unknown value \"zipf\"; valid values are: fixed, uniform");
}

TEST_CASE("typed choices return the enum value, default by value, and list the names") {
  enum class Shape : std::uint8_t { round, square, flat };
  static constexpr std::array<Choice<Shape>, 3> k_shapes{
      {{"round", Shape::round}, {"square", Shape::square}, {"flat", Shape::flat}}};
  const auto tab = parse("a = \"square\"\nb = \"cube\"\nc = 3\n");
  ParamTable t({ParamLayer{&tab, "f.toml"}}, "");
  REQUIRE(t.choice<Shape>("a", Shape::round, "doc", k_shapes) == Shape::square);
  REQUIRE(t.choice<Shape>("missing", Shape::flat, "doc", k_shapes) == Shape::flat);
  REQUIRE_THROWS_WITH(t.choice<Shape>("b", Shape::round, "doc", k_shapes),
                      "f.toml: b: unknown value \"cube\"; valid values are: round, square, flat");
  REQUIRE_THROWS_WITH(t.choice<Shape>("c", Shape::round, "doc", k_shapes),
                      Contains("expected one of round, square, flat, got the integer 3"));
  REQUIRE(choice_name<Shape>(k_shapes, Shape::flat) == "flat");
  ParamTable docs(std::string("sec"));
  docs.choice<Shape>("shape", Shape::square, "the shape", k_shapes);
  REQUIRE(docs.docs().back().default_value == "\"square\"");
  REQUIRE(docs.docs().back().type == "one of: round, square, flat");
}

TEST_CASE("an optional number is absent, not a sentinel, and keeps its bounds") {
  const auto tab = parse("p = 0.5\nbad = 2.0\n");
  ParamTable t({ParamLayer{&tab, "f.toml"}}, "");
  REQUIRE(t.optional_real("p", "the predictor's", "doc", k_unit_interval) == 0.5);
  REQUIRE_FALSE(t.optional_real("missing", "the predictor's", "doc", k_unit_interval).has_value());
  REQUIRE_THROWS_WITH(t.optional_real("bad", "the predictor's", "doc", k_unit_interval),
                      Contains("bad: expected a number in [0, 1], got"));
  ParamTable docs(std::string("sec"));
  REQUIRE_FALSE(docs.optional_real("p", "the predictor's", "the accuracy").has_value());
  REQUIRE(docs.docs().back().default_value == "none (the predictor's)");
}

TEST_CASE("required keys fail when missing, nested tables keep the path") {
  const auto tab = parse("[inner]\nx = 1\n");
  ParamTable t({ParamLayer{&tab, "f.toml"}}, "root");
  auto inner = t.table("inner", "doc");
  REQUIRE_THROWS_WITH(inner.integer_required("y", "the y"), "f.toml: root.inner.y: missing required key (the y)");
  const auto bad = parse("inner = 3\n");
  ParamTable t2({ParamLayer{&bad, "g.toml"}}, "");
  REQUIRE_THROWS_WITH(t2.table("inner", "doc"), "g.toml: inner: expected a table, got the integer 3");
}

TEST_CASE("documentation mode records every key with its default and never fails") {
  ParamTable t(std::string("policy"));
  REQUIRE(t.documenting());
  REQUIRE(t.real("window", 16.0, "steps in the window", k_positive) == 16.0);
  REQUIRE(t.integer_required("k", "restarts") == 0);
  t.finish();
  REQUIRE(t.docs().size() == 2);
  REQUIRE(t.docs()[0].key == "policy.window");
  REQUIRE(t.docs()[0].default_value == "16");
  REQUIRE(t.docs()[0].description == "steps in the window");
  REQUIRE(t.docs()[1].default_value.empty());
}
