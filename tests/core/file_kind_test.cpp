// SPDX-License-Identifier: Apache-2.0
// Outputs replace only what is theirs to replace, inputs are read only from regular files: every kind of
// directory entry that is not a regular file is refused by name, before anything is written or read.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/file_kind.hpp"

namespace fs = std::filesystem;
using Catch::Contains;
using epsim::core::check_input_file;
using epsim::core::check_output_file;

namespace {
fs::path fresh(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("epsim_kind_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}
std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
}  // namespace

TEST_CASE("an output replaces only a regular file or takes a new name") {
  const fs::path d = fresh("out");
  std::ofstream(d / "plain.csv") << "old";
  REQUIRE_NOTHROW(check_output_file(d / "plain.csv"));
  REQUIRE_NOTHROW(check_output_file(d / "new.csv"));
  REQUIRE(::mkfifo((d / "fifo").c_str(), 0600) == 0);
  fs::create_directory(d / "dir");
  fs::create_symlink(d / "plain.csv", d / "link");
  fs::create_symlink(d / "nowhere", d / "dangling");
  REQUIRE_THROWS_WITH(check_output_file(d / "fifo"), Contains("fifo: is a FIFO"));
  REQUIRE_THROWS_WITH(check_output_file(d / "dir"), Contains("dir: is a directory"));
  REQUIRE_THROWS_WITH(check_output_file(d / "link"), Contains("link: is a symbolic link"));
  REQUIRE_THROWS_WITH(check_output_file(d / "dangling"), Contains("dangling: is a symbolic link"));
  REQUIRE_THROWS_WITH(check_output_file("/dev/null"), Contains("/dev/null: is a device"));

  // The writers check it too: the link and what it points to stay as they were, nothing is left.
  REQUIRE_THROWS_WITH(epsim::core::write_file_atomically(d / "link", "new"), Contains("is a symbolic link"));
  REQUIRE(fs::is_symlink(d / "link"));
  REQUIRE(slurp(d / "plain.csv") == "old");
  // (A FIFO stands for a device here: a test must never risk replacing the system's /dev/null.)
  REQUIRE_THROWS_WITH(epsim::core::write_file_atomically(d / "fifo", "new"), Contains("is a FIFO"));
  REQUIRE(fs::is_fifo(d / "fifo"));
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(d)) {
    ++entries;
  }
  REQUIRE(entries == 5);  // plain.csv, fifo, dir, link, dangling: no temporary file
  fs::remove_all(d);
}

TEST_CASE("an input is read only from a regular file, a link to one included") {
  const fs::path d = fresh("in");
  std::ofstream(d / "summary.json") << "{}";
  fs::create_symlink(d / "summary.json", d / "link.json");
  REQUIRE(::mkfifo((d / "fifo.json").c_str(), 0600) == 0);
  REQUIRE_NOTHROW(check_input_file(d / "summary.json"));
  REQUIRE_NOTHROW(check_input_file(d / "link.json"));
  REQUIRE_THROWS_WITH(check_input_file(d / "fifo.json"), Contains("fifo.json: is a FIFO"));
  REQUIRE_THROWS_WITH(check_input_file(d), Contains("is a directory"));
  REQUIRE_THROWS_WITH(check_input_file("/dev/zero"), Contains("is a device"));
  REQUIRE_THROWS_WITH(check_input_file(d / "missing.json"), Contains("missing.json: cannot open"));
  fs::remove_all(d);
}
