// SPDX-License-Identifier: Apache-2.0
// EPLB load histories: entries streamed one at a time in order, unknown keys skipped, bad loads refused
// with the entry, layer and expert named.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "engines/load_history.hpp"

namespace fs = std::filesystem;
using epsim::engines::LoadMatrix;
using epsim::engines::read_load_history;

namespace {

fs::path write_text(const std::string& name, const std::string& text) {
  const fs::path p = fs::temp_directory_path() / ("epsim_lh_" + name);
  std::ofstream(p) << text;
  return p;
}

}  // namespace

TEST_CASE("load history: entries arrive in order, other keys skipped", "[engines]") {
  const fs::path p = write_text("ok.json", R"({"model": "x", "load_history": [
      {"step": 7, "logical_expert_load": [[1, 2, 3], [6, 0, 0]], "extra": {"a": [1, [2]]}},
      {"logical_expert_load": [[0, 0, 4.0], [2, 2, 0]]}], "tail": null})");
  std::vector<LoadMatrix> seen;
  const std::int64_t n = read_load_history(p, [&](std::int64_t i, const LoadMatrix& m) {
    CHECK(i == static_cast<std::int64_t>(seen.size()));
    seen.push_back(m);
  });
  CHECK(n == 2);
  REQUIRE(seen.size() == 2);
  CHECK(seen[0] == LoadMatrix{{1, 2, 3}, {6, 0, 0}});
  CHECK(seen[1] == LoadMatrix{{0, 0, 4}, {2, 2, 0}});
  fs::remove(p);
}

TEST_CASE("load history: malformed files name the entry, layer and expert", "[engines]") {
  const auto refuses = [](const std::string& name, const std::string& text, const std::string& what) {
    const fs::path p = write_text(name, text);
    CHECK_THROWS_WITH(read_load_history(p, [](std::int64_t, const LoadMatrix&) {}),
                      Catch::Contains(p.string()) && Catch::Contains(what));
    fs::remove(p);
  };
  refuses("none.json", R"({"weight": [[1]]})", "expected {\"load_history\"");
  refuses("negative.json", R"({"load_history": [{"logical_expert_load": [[1, 2], [3, -4]]}]})",
          "load_history[0].logical_expert_load[1][1]: expected a load >= 0, got -4");
  refuses("string.json", R"({"load_history": [{"logical_expert_load": [[1, "2"]]}]})",
          "load_history[0].logical_expert_load[0][1]: expected a number, got a string");
  refuses("ragged.json", R"({"load_history": [{"logical_expert_load": [[1, 2], [3]]}]})",
          "load_history[0].logical_expert_load[1] has 1 experts, layer 0 has 2");
  refuses("missing.json", R"({"load_history": [{"logical_expert_load": [[1]]}, {"other": 1}]})",
          "load_history[1] has no \"logical_expert_load\"");
  refuses("deep.json", R"({"load_history": [{"logical_expert_load": [[[1]]]}]})", "nested deeper");
  refuses("flat.json", R"({"load_history": [{"logical_expert_load": [1, 2]}]})", "got the number 1");
  refuses("cut.json", R"({"load_history": [{"logical_expert_load": [[1, 2)", "invalid JSON at byte");
}
