// SPDX-License-Identifier: Apache-2.0
// SpillText against the string it stands for, across spills; the streamed atomic write leaves nothing
// behind when its writer throws.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/spill_text.hpp"

using namespace epsim;

TEST_CASE("spill text: the same text, in order, however much went to disk", "[quick]") {
  core::SpillText t("head\n", 64);
  std::string expect = "head\n";
  for (int i = 0; i < 1000; ++i) {
    const std::string line = "line " + std::to_string(i) + "\n";
    t.tail() += line;
    expect += line;
    t.spill_if_full();
    if (i == 500) {
      CHECK(t.str() == expect);  // reading back in the middle; appending goes on after it
    }
  }
  CHECK(t.spilled() > 0);
  CHECK(t.tail().size() < 64);  // memory bounded by the limit
  CHECK(t.size() == expect.size());
  CHECK(t.str() == expect);
  std::ostringstream twice;
  t.write_to(twice);
  t.write_to(twice);
  CHECK(twice.str() == expect + expect);
}

TEST_CASE("spill text: nothing spilled below the limit", "[quick]") {
  core::SpillText t("a,b\n");
  t.tail() += "1,2\n";
  t.spill_if_full();
  CHECK(t.spilled() == 0);
  CHECK(t.str() == "a,b\n1,2\n");
}

TEST_CASE("atomic write from a stream: whole file, or nothing and no temporary file", "[quick]") {
  const auto dir = std::filesystem::temp_directory_path() / "epsim_spill_text_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  core::SpillText t("x\n", 4);
  for (int i = 0; i < 100; ++i) {
    t.tail() += "row\n";
    t.spill_if_full();
  }
  core::write_file_atomically(dir / "ok.csv", [&](std::ostream& o) { t.write_to(o); });
  std::ifstream in(dir / "ok.csv");
  std::stringstream got;
  got << in.rdbuf();
  CHECK(got.str() == t.str());
  CHECK_THROWS_AS(core::write_file_atomically(dir / "bad.csv",
                                              [](std::ostream& o) {
                                                o << "half";
                                                throw core::Error("writer failed");
                                              }),
                  core::Error);
  int files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) {
    ++files;
  }
  CHECK(files == 1);  // ok.csv only: no bad.csv, no temporary file
  std::filesystem::remove_all(dir);
}
