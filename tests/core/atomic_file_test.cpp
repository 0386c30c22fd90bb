// SPDX-License-Identifier: Apache-2.0
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/atomic_file.hpp"
#include "core/error.hpp"

namespace fs = std::filesystem;

TEST_CASE("atomic writes replace the whole file and leave no temporary behind") {
  const fs::path dir = fs::temp_directory_path() / "epsim_atomic_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path f = dir / "out.txt";
  epsim::core::write_file_atomically(f, "first version, longer\n");
  epsim::core::write_file_atomically(f, "second\n");
  std::ifstream in(f);
  std::stringstream ss;
  ss << in.rdbuf();
  REQUIRE(ss.str() == "second\n");
  REQUIRE(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);
  fs::remove_all(dir);
}

TEST_CASE("writing into a missing directory fails with a message naming the file") {
  REQUIRE_THROWS_WITH(epsim::core::write_file_atomically("/nonexistent-dir-epsim/x.json", "x"),
                      Catch::Contains("/nonexistent-dir-epsim/x.json"));
}

TEST_CASE("only a dead writer's temporary files are removed, and only directly in the folder") {
  const fs::path dir = fs::temp_directory_path() / "epsim_atomic_dead_test";
  fs::remove_all(dir);
  fs::create_directories(dir / "user");
  // PIDs never reach 2^31 - 100 (Linux's pid_max is at most 2^22): that process does not exist.
  const std::string dead = "2147483547";
  const std::string alive = std::to_string(::getpid());
  std::ofstream(dir / ("runs.csv.tmp-" + dead)) << "killed sweep's";
  std::ofstream(dir / ("points.csv.tmp-" + alive)) << "a running writer's";
  std::ofstream(dir / "user" / ("data.tmp-" + dead)) << "the user's own, below";
  std::ofstream(dir / "notes.tmp-x1") << "not a temporary's name";
  REQUIRE(epsim::core::remove_dead_temporaries(dir) == 1);
  REQUIRE_FALSE(fs::exists(dir / ("runs.csv.tmp-" + dead)));
  REQUIRE(fs::exists(dir / ("points.csv.tmp-" + alive)));
  REQUIRE(fs::exists(dir / "user" / ("data.tmp-" + dead)));
  REQUIRE(fs::exists(dir / "notes.tmp-x1"));
  fs::remove_all(dir);
}
